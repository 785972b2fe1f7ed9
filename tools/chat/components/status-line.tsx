// The bottom line: the last result or error, else the bus's trouble, else the key help
// (keys.ts statusHelp); and how far the feed is scrolled back.

import { Box, Text } from 'ink';
import { accent, type ColorDepth } from '../colors.js';
import { neutralize, plural } from '../../wire/render.js';

interface StatusLineProps {
  status: { text: string; level: 'info' | 'error' } | null;
  busStatus: string | null;
  help: string;
  scroll: number;
  /** The names of the parties asked with /ask whose reply has not come yet (issue 23 §1). */
  pending?: string[];
  depth: ColorDepth;
  width: number;
}

/** `· waiting for a reply from api, web`: kept on the line until every ask is answered. */
export function pendingText(names: string[]): string {
  return names.length === 0 ? '' : `  · waiting for a reply from ${[...new Set(names)].map((n) => neutralize(n)).join(', ')}`;
}

export function StatusLine({ status, busStatus, help, scroll, pending = [], depth, width }: StatusLineProps) {
  const text = status ? status.text : busStatus ? busStatus : help;
  const color = status?.level === 'error' || (!status && busStatus) ? accent(depth, 'red') : undefined;
  const right = `${pendingText(pending)}${scroll > 0 ? `  ↑ ${plural(scroll, 'row')} back · PgDn/End to follow` : ''}`;
  return (
    <Box height={1} width={width} overflow="hidden">
      <Text wrap="truncate-end" {...(color ? { color } : {})}>
        {text}
        {right}
      </Text>
    </Box>
  );
}
