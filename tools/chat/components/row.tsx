// One feed row: styled segments (state/lines.ts), cut at the terminal's width.

import { Text } from 'ink';
import type { Line } from '../state/lines.js';

export function Row({ line }: { line: Line }) {
  if (line.length === 0) return <Text> </Text>;
  return (
    <Text wrap="truncate-end">
      {line.map((s, i) => (
        <Text key={i} {...(s.color ? { color: s.color } : {})} bold={s.bold ?? false} dimColor={s.dim ?? false} inverse={s.inverse ?? false}>
          {s.text}
        </Text>
      ))}
    </Text>
  );
}
