// Who is live, each with what delivers to them; "deaf" where nothing does.

import { Box, Text } from 'ink';
import type { Peer } from '../../bus/presence/index.js';
import { neutralize } from '../../wire/render.js';
import { accent, type ColorDepth, colorFor } from '../colors.js';
import { peerStatus } from '../peer-status.js';

export function RosterLine({ peers, me, mouse, depth, width }: { peers: Peer[]; me: string; mouse: boolean; depth: ColorDepth; width: number }) {
  const others = peers.filter((p) => p.id !== me);
  return (
    <Box height={1} width={width} overflow="hidden">
      <Text wrap="truncate-end">
        <Text dimColor>live: </Text>
        {others.length === 0 ? <Text dimColor>nobody else</Text> : null}
        {others.map((p, i) => {
          const st = peerStatus(p);
          const color = colorFor(p.id, depth);
          return (
            <Text key={p.id}>
              {i > 0 ? <Text dimColor> · </Text> : null}
              <Text {...(color ? { color } : {})}>{neutralize(p.name)}</Text>
              <Text dimColor>{` ${st.status}`}</Text>
              {/* Deaf: nothing delivers to it, so what is sent there piles up unread. */}
              {st.deaf ? <Text {...(accent(depth, 'yellow') ? { color: 'yellow' } : {})}>{' deaf'}</Text> : null}
            </Text>
          );
        })}
        <Text dimColor>{` · ${me} (you)${mouse ? ' · mouse on' : ''}`}</Text>
      </Text>
    </Box>
  );
}
