// The feed: the rows visibleWindow chose, bottom-aligned. A windowed list rather than
// <Static>: tabs and scroll-back redraw history, which Static output cannot do.

import { Box } from 'ink';
import { memo } from 'react';
import type { Line } from '../state/lines.js';
import { Row } from './row.js';

export const Feed = memo(function Feed({ lines, height }: { lines: Line[]; height: number }) {
  const pad = Math.max(0, height - lines.length);
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      {pad > 0 ? <Box height={pad} /> : null}
      {lines.map((l, i) => (
        <Row key={i} line={l} />
      ))}
    </Box>
  );
});
