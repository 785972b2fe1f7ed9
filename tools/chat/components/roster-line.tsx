// Who is live, each with how a message reaches them when not at once: "next turn", "waiting".

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
              {/* Waiting: no conduit of it is live, so what is sent there waits until one runs. */}
              {st.note !== null ? <Text {...(st.reach.word === 'waiting' && accent(depth, 'yellow') ? { color: 'yellow' } : { dimColor: true })}>{` ${st.note}`}</Text> : null}
            </Text>
          );
        })}
        <Text dimColor>{` · ${me} (you)${mouse ? ' · mouse on' : ''}`}</Text>
      </Text>
    </Box>
  );
}
