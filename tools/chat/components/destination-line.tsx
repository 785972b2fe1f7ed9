// The rule above the compose box: where Enter sends the draft (state/destination.ts).

import { Box, Text } from 'ink';
import { accent, type ColorDepth } from '../colors.js';
import { textWidth } from '../../wire/width.js';

export function DestinationLine({ text, bad, depth, width }: { text: string; bad: boolean; depth: ColorDepth; width: number }) {
  const color = bad && accent(depth, 'yellow') ? { color: 'yellow' } : accent(depth, 'green') ? { color: 'green' } : {};
  return (
    <Box height={1} width={width} overflow="hidden">
      <Text wrap="truncate-end" {...color}>
        {`── ${text} `}
        {'─'.repeat(Math.max(0, width - textWidth(text) - 4))}
      </Text>
    </Box>
  );
}
