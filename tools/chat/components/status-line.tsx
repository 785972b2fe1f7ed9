// The bottom line: the last result or error, else the bus's trouble, else the key help
// (keys.ts statusHelp); and how far the feed is scrolled back.

import { Box, Text } from 'ink';
import { accent, type ColorDepth } from '../colors.js';
import { plural } from '../../wire/render.js';

interface StatusLineProps {
  status: { text: string; level: 'info' | 'error' } | null;
  busStatus: string | null;
  help: string;
  scroll: number;
  depth: ColorDepth;
  width: number;
}

export function StatusLine({ status, busStatus, help, scroll, depth, width }: StatusLineProps) {
  const text = status ? status.text : busStatus ? busStatus : help;
  const color = status?.level === 'error' || (!status && busStatus) ? accent(depth, 'red') : undefined;
  const right = scroll > 0 ? `  ↑ ${plural(scroll, 'row')} back · PgDn/End to follow` : '';
  return (
    <Box height={1} width={width} overflow="hidden">
      <Text wrap="truncate-end" {...(color ? { color } : {})}>
        {text}
        {right}
      </Text>
    </Box>
  );
}
