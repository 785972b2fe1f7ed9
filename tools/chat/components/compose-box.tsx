// The compose box: the draft's rows (state/compose.ts composeRows), at most `maxRows`,
// scrolled so the cursor's row is shown.

import { Box, Text } from 'ink';

interface ComposeView {
  rows: { before: string; at: string; after: string }[];
  cursorRow: number;
}

export function ComposeBox({ view, maxRows }: { view: ComposeView; maxRows: number }) {
  const height = Math.min(maxRows, view.rows.length);
  const first = Math.max(0, Math.min(view.cursorRow - maxRows + 1, view.rows.length - maxRows));
  const shown = view.rows.slice(first).slice(0, maxRows);
  return (
    <Box flexDirection="column" height={height}>
      {shown.map((r, i) => (
        <Text key={i} wrap="truncate-end">
          <Text dimColor>{i === 0 ? '> ' : '  '}</Text>
          {r.before}
          {r.at ? <Text inverse>{r.at}</Text> : null}
          {r.after}
        </Text>
      ))}
    </Box>
  );
}
