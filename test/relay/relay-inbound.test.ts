// The inbound write on a real temporary bus: idempotent by id and bytes, never resurrecting a
// message cleaned up here, but writing a redelivery whose first write a crash cut short.
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { type ImportContext, importMessage } from '../../tools/relay/inbound.js';
import { ImportedSet } from '../../tools/relay/store.js';
import { readIndex } from '../../tools/bus/store/dir-index.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const line = new TextEncoder().encode('external:ann@pts/1|p|/p|from_kind:human|from_id:ann|to:*|hello\n');
const msg = (over: Partial<Parameters<typeof importMessage>[1]> = {}) => ({ subject: 'attend.v1.alpha.bcast', data: line, id: '0mx4aaaaa000-abcdefgh', origin: 'alpha', timeMs: Date.parse('2026-11-30T12:00:00Z'), ...over });

const ctx = (imported: ImportedSet, self = 'bravo'): ImportContext => ({
  root: bus.root,
  self,
  imported,
  now: Date.now(),
  keyKnown: () => false,
  nodeSigns: () => false,
  claim: () => null,
  dissolved: () => null,
});

describe('importMessage', () => {
  it('writes once with the hub time as mtime and an index line; the same bytes again are already here', async () => {
    const imported = new ImportedSet(bus.root);
    const out = await importMessage(ctx(imported, 'bravo'), msg());
    expect(out.kind).toBe('written');
    const path = join(bus.root, 'signals', '_broadcast', '0mx4aaaaa000-abcdefgh.signal');
    expect(readFileSync(path)).toEqual(Buffer.from(line));
    expect(statSync(path).mtimeMs).toBe(Date.parse('2026-11-30T12:00:00Z'));
    const idx = readIndex(join(bus.root, 'signals', '_broadcast'), undefined, Date.now());
    expect(idx.state?.off ?? 0).toBeGreaterThan(0);
    expect((await importMessage(ctx(imported, 'bravo'), msg())).kind).toBe('duplicate');
    expect((await importMessage(ctx(imported, 'alpha'), msg())).kind).toBe('own');
    // The record survives a restart of the relay.
    expect(new ImportedSet(bus.root).has('_broadcast', '0mx4aaaaa000-abcdefgh')).toBe(true);
  });

  it('does not bring back what was removed here, unless the hub redelivers it (the first write never finished)', async () => {
    const imported = new ImportedSet(bus.root);
    await importMessage(ctx(imported, 'bravo'), msg());
    const path = join(bus.root, 'signals', '_broadcast', '0mx4aaaaa000-abcdefgh.signal');
    rmSync(path);
    expect((await importMessage(ctx(imported, 'bravo'), msg())).kind).toBe('duplicate');
    expect(existsSync(path)).toBe(false);
    expect((await importMessage(ctx(imported, 'bravo'), msg({ redelivered: true }))).kind).toBe('written');
    expect(existsSync(path)).toBe(true);
  });
});
