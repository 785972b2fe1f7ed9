// Signing and verification cost (issue 14, Performance):
//   - `attend send` with signing against without (goal ≤ 1.15×, issue 20): the same working tree built
//     twice, once with the send's signer taken out (the "unsigned twin"), so the ratio is the
//     cost of signing alone; and, for history, the build of the commit before signing landed
//     (which also lacks everything added since: fsync, the policy gate, delivery notes).
//     Interleaved runs; medians of wall time and of CPU time (user + system, which each
//     process reports as it exits), since on a shared machine CPU time is the steadier figure.
//   - `attend inbox --drain` over 1,000 new messages, all signed (each verified) against all
//     unsigned (goal ≤ 1.2×);
//   - the sensor (`attend run`) shown 1,000 new messages one at a time, signed against
//     unsigned: its CPU time (goal ≤ 1.2×);
//   - readMessage (which verifies) × 1,000 in process: the bare read, the floor under both.
// The unsigned side still looks for a sidecar (one failed open per message): that is what
// every reader does now, so it is the honest "without verification" floor of this build.

import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { familyPolicy, fakeSession, startSensor } from './latency.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The key directory the bench's sessions read (HOME is tmp): readers take a local node's keys
 * from its record there (issue 20), so the writers sign with keys kept in it.
 */
const readersKeys = (tmp) => join(tmp, '.config', 'attend', 'keys');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** CPU ms (user + system) of a running process, from /proc/<pid>/stat. */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // clock ticks are 10 ms on Linux
}

function time(args, env, cwd, input) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env, cwd, input, stdio: ['pipe', 'pipe', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  time.out = r.stdout;
  time.cpu = Number(/__cpu (\d+)/.exec(r.stderr)?.[1] ?? NaN) / 1000;
  return ms;
}

/**
 * A preload that reports the process's own CPU time (user + system, µs) as it exits: the
 * steadier figure on a shared machine, and finer than the 10 ms ticks of /proc.
 */
function cpuProbe(tmp) {
  const file = join(tmp, 'cpu-probe.cjs');
  writeFileSync(file, "process.on('exit', () => { const u = process.resourceUsage(); require('node:fs').writeSync(2, `\\n__cpu ${u.userCPUTime + u.systemCPUTime}\\n`); });\n");
  return file;
}

/**
 * This working tree built with the send's signer taken out: everything else (the gate,
 * the fsync, the delivery notes) is the same code, and node:crypto never loads.
 */
function buildUnsignedTwin(tmp) {
  const dir = join(tmp, 'twin');
  const files = execFileSync('git', ['-C', repo, 'ls-files', '-z', 'tools', 'scripts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'], { encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) cpSync(join(repo, f), join(dir, f));
  const send = join(dir, 'tools/verbs/send.ts');
  const text = readFileSync(send, 'utf8');
  const line = 'const signer = ctx.signer();';
  if (!text.includes(line)) throw new Error(`the unsigned twin needs '${line}' in tools/verbs/send.ts`);
  writeFileSync(send, text.replace(line, 'const signer = undefined;'));
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  spawnSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'ignore' });
  if (!existsSync(join(dir, 'dist/tools/cli/attend.cjs'))) throw new Error('the unsigned twin did not build');
  execFileSync(process.execPath, ['scripts/postbuild.mjs'], { cwd: dir, stdio: 'inherit' });
  return join(dir, 'dist/tools/cli/attend.cjs');
}

/** Build the commit before signing landed into tmp/base; returns its bin and commit. */
function buildBaseline(tmp) {
  const added = execFileSync('git', ['-C', repo, 'log', '--follow', '--diff-filter=A', '--format=%H', '--', 'tools/bus/trust/signing.ts'], { encoding: 'utf8' }).trim().split('\n').pop();
  const commit = execFileSync('git', ['-C', repo, 'rev-parse', '--short', `${added}^`], { encoding: 'utf8' }).trim();
  const dir = join(tmp, 'base');
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git -C '${repo}' archive ${commit} | tar -x -C '${dir}'`]);
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  // Type errors against today's node_modules (a dependency dropped since, like chokidar for
  // the sensor) do not matter for the send path measured here: tsc still emits.
  spawnSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'ignore' });
  if (!existsSync(join(dir, 'dist/tools/cli/attend.cjs'))) throw new Error(`the baseline ${commit} did not build`);
  execFileSync(process.execPath, ['scripts/postbuild.mjs'], { cwd: dir, stdio: 'inherit' });
  return { bin: join(dir, 'dist/tools/cli/attend.cjs'), commit };
}

async function lib(bin) {
  const tools = dirname(dirname(bin));
  const imp = (p) => import(pathToFileURL(join(tools, p)).href);
  // The modules moved in issue 19; a lib of either layout loads.
  const first = async (...ps) => { for (const p of ps) if (existsSync(join(tools, p))) return imp(p); throw new Error(`none of ${ps.join(', ')} in ${tools}`); };
  return { ...(await first('bus/store/messages.js', 'bus/signals.js')), ...(await first('bus/trust/signing.js', 'bus/signing.js')), ...(await imp('wire/ids.js')), ...(await imp('wire/names.js')) };
}

export async function sendRatio(bin, tmp, rounds) {
  const base = buildBaseline(tmp);
  const twin = buildUnsignedTwin(tmp);
  const s = fakeSession(tmp, 'send');
  const human = { ...s.env };
  for (const k of ['CLAUDECODE', 'CLAUDE_PID', 'CLAUDE_CODE_SESSION_ID']) delete human[k];
  const probe = ['--require', cpuProbe(tmp)];
  // The floor under any signed send: what loading node:crypto, importing a key and making one
  // signature add to a fresh Node process, against the same process doing nothing.
  const { generateKeyPairSync } = await import('node:crypto');
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  const empty = join(tmp, 'floor-empty.cjs');
  const floor = join(tmp, 'floor-sign.cjs');
  writeFileSync(empty, '');
  writeFileSync(floor, `const c = require('node:crypto');\nconst k = c.createPrivateKey({ key: ${JSON.stringify(jwk)}, format: 'jwk' });\nc.sign(null, Buffer.from('build is green'), k);\n`);
  const cases = [
    ['node -e 0', [...probe, '-e', '0'], human],
    ['node, an empty script', [...probe, empty], human],
    ['node, a script that loads node:crypto, imports a key and signs once', [...probe, floor], human],
    [`before signing (${base.commit}): attend send (human, #open)`, [...probe, base.bin, 'send', 'build is green'], human],
    ['without signing (this tree): attend send (human, #open)', [...probe, twin, 'send', 'build is green'], human],
    ['signed: attend send (human, #open)', [...probe, bin, 'send', 'build is green'], human],
    [`before signing (${base.commit}): attend send (agent, #open)`, [...probe, base.bin, 'send', 'build is green'], s.env],
    ['without signing (this tree): attend send (agent, #open)', [...probe, twin, 'send', 'build is green'], s.env],
    ['signed: attend send (agent, #open)', [...probe, bin, 'send', 'build is green'], s.env],
  ];
  const wall = new Map(cases.map(([n]) => [n, []]));
  const cpu = new Map(cases.map(([n]) => [n, []]));
  try {
    for (const [, args, env] of cases) time(args, env, s.cwd); // warm caches; makes the keys
    for (let r = 0; r < rounds; r++) {
      for (const [n, args, env] of cases) {
        wall.get(n).push(time(args, env, s.cwd));
        cpu.get(n).push(time.cpu);
      }
    }
  } finally {
    s.proc.kill('SIGKILL');
  }
  const w = (n) => median(wall.get(n));
  const c = (n) => median(cpu.get(n));
  const ratio = (who, against) => ({ wall: w(`signed: attend send (${who}, #open)`) / w(against(who)), cpu: c(`signed: attend send (${who}, #open)`) / c(against(who)) });
  const twinOf = (who) => `without signing (this tree): attend send (${who}, #open)`;
  const baseOf = (who) => `before signing (${base.commit}): attend send (${who}, #open)`;
  const floorMs = { wall: w(cases[2][0]) - w(cases[1][0]), cpu: c(cases[2][0]) - c(cases[1][0]) };
  const twinWall = w(twinOf('human'));
  const twinCpu = c(twinOf('human'));
  return {
    commit: base.commit,
    floor: { ...floorMs, ratioWall: (twinWall + floorMs.wall) / twinWall, ratioCpu: (twinCpu + floorMs.cpu) / twinCpu, signedOver: w('signed: attend send (human, #open)') - twinWall },
    rows: cases.map(([n]) => `| ${n} | ${w(n).toFixed(1)} | ${c(n).toFixed(1)} |`),
    human: ratio('human', twinOf),
    agent: ratio('agent', twinOf),
    humanBase: ratio('human', baseOf),
    agentBase: ratio('agent', baseOf),
  };
}

export async function drainRatio(bin, tmp, runs) {
  const L = await lib(bin);
  const signer = L.createSigner({ keysDir: readersKeys(tmp), root: join(tmp, 'bus'), host: 'bench', now: Date.now });
  const newId = L.createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  const out = { signed: [], unsigned: [] };
  for (let r = 0; r < runs; r++) {
    for (const kind of ['signed', 'unsigned']) {
      const s = fakeSession(tmp, `drain-${kind}-${r}`);
      const tray = { kind: 'tray', key: L.attendKey(s.cwd) };
      const node = kind === 'signed' ? 'bench-signer' : 'bench-plain';
      try {
        // Start the ledger (cold start), then 1,000 new messages for a warm drain.
        time([bin, 'inbox', '--drain', '--format', 'plain'], s.env, s.cwd, '{}');
        for (let i = 0; i < 1000; i++) {
          L.writeSignal(s.root, tray, newId(), { from: `claude:${node}`, project: 'b', cwd: '/b', fromKind: 'agent', fromId: node, to: s.sessionId, body: `new ${i}` }, kind === 'signed' ? signer : undefined);
        }
        out[kind].push(time([bin, 'inbox', '--drain', '--format', 'plain'], s.env, s.cwd, '{}'));
        // The drain shows the oldest in full, counts the rest: the first of the thousand, verified on the signed side.
        if (!/\bnew 0\n/.test(time.out) || (kind === 'signed') !== time.out.includes('sig=ok')) throw new Error(`the ${kind} drain did not show its messages: ${time.out.slice(0, 300)}`);
      } finally {
        s.proc.kill('SIGKILL');
      }
    }
  }
  return { signed: median(out.signed), unsigned: median(out.unsigned) };
}

/**
 * The sensor shown `n` new messages one at a time (each waited for on its stdout), signed
 * and unsigned interleaved between two sessions, each with its own sensor: the CPU time each
 * sensor spent (user + system from /proc/<pid>/stat).
 */
async function sensorRatio(bin, tmp, n) {
  const L = await lib(bin);
  const signer = L.createSigner({ keysDir: readersKeys(tmp), root: join(tmp, 'bus'), host: 'bench', now: Date.now });
  const newId = L.createIdFactory({ now: Date.now, pid: process.pid + 2, random: Math.random });
  const sides = ['signed', 'unsigned'].map((kind) => {
    const s = fakeSession(tmp, `sensor-${kind}`);
    return { kind, s, sensor: startSensor(bin, s), tray: { kind: 'tray', key: L.attendKey(s.cwd) }, node: `sensor-${kind}-writer`, cpu: 0 };
  });
  try {
    for (const side of sides) await side.sensor.ready();
    // One message each first: the sensors' start-up work is not counted.
    for (const side of sides) {
      const id = newId();
      L.writeSignal(side.s.root, side.tray, id, { from: `claude:${side.node}`, project: 'b', cwd: '/b', fromKind: 'agent', fromId: side.node, to: side.s.sessionId, body: 'warm up' }, side.kind === 'signed' ? signer : undefined);
      await side.sensor.waitFor(`id=${id}]`);
    }
    const before = sides.map((side) => cpuMs(side.sensor.proc.pid));
    for (let i = 0; i < n; i++) {
      for (const side of sides) {
        const id = newId();
        const from = side.sensor.state.out.length;
        L.writeSignal(side.s.root, side.tray, id, { from: `claude:${side.node}`, project: 'b', cwd: '/b', fromKind: 'agent', fromId: side.node, to: side.s.sessionId, body: `new ${i}` }, side.kind === 'signed' ? signer : undefined);
        await side.sensor.waitFor(`id=${id}]`, from);
      }
    }
    sides.forEach((side, i) => (side.cpu = cpuMs(side.sensor.proc.pid) - before[i]));
    const signedOut = sides[0].sensor.state.out;
    if (!signedOut.includes('sig=ok')) throw new Error('the signed side showed no sig=ok');
    if (signedOut.includes('sig=bad')) throw new Error('a signed message failed to verify');
  } finally {
    for (const side of sides) {
      side.sensor.proc.kill('SIGTERM');
      side.s.proc.kill('SIGKILL');
    }
  }
  return { signed: sides[0].cpu, unsigned: sides[1].cpu };
}

async function readRatio(bin, tmp, rounds) {
  const L = await lib(bin);
  const root = join(tmp, 'bus-read');
  const signer = L.createSigner({ keysDir: readersKeys(tmp), root, host: 'bench', now: Date.now });
  const newId = L.createIdFactory({ now: Date.now, pid: process.pid + 1, random: Math.random });
  const scopes = { signed: { kind: 'channel', name: 'signed' }, unsigned: { kind: 'channel', name: 'unsigned' } };
  const ids = { signed: [], unsigned: [] };
  for (const kind of ['signed', 'unsigned']) {
    const node = kind === 'signed' ? 'reader-signer' : 'reader-plain';
    for (let i = 0; i < 1000; i++) {
      const id = newId();
      ids[kind].push(id);
      L.writeSignal(root, scopes[kind], id, { from: `claude:${node}`, project: 'b', cwd: '/b', fromKind: 'agent', fromId: node, to: '*', body: `m ${i}` }, kind === 'signed' ? signer : undefined);
    }
  }
  const t = { signed: [], unsigned: [] };
  let bad = 0;
  for (let r = 0; r < rounds; r++) {
    for (const kind of ['signed', 'unsigned']) {
      const t0 = performance.now();
      for (const id of ids[kind]) if (L.readMessage(root, scopes[kind], id, L.silentReporter).sig === 'bad') bad++;
      t[kind].push(performance.now() - t0);
    }
  }
  if (bad > 0) throw new Error(`${bad} messages failed to verify`);
  // One Ed25519 check alone, warm, with a cached public key: what no reader can do without.
  const { generateKeyPairSync, sign, verify } = await import('node:crypto');
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const data = Buffer.alloc(200, 7);
  const sig = sign(null, data, privateKey);
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++) verify(null, data, publicKey, sig);
    runs.push(performance.now() - t0);
  }
  return { signed: median(t.signed), unsigned: median(t.unsigned), verifyUs: median(runs) };
}

/**
 * Key lookup against the size of the key directory (issue 20: a lookup must not grow with the
 * number of keys or hosts): `attend inbox --json` as a process over 100 messages from 100
 * signers, each verified against its signer's record (read and checked once per process), on
 * two buses alike but for their key directories: one holds only those 100 records, the other
 * also 1,000 records of other nodes and the keys of 1,000 nodes on 100 other machines.
 */
export async function lookupScale(bin, tmp, rounds) {
  const L = await lib(bin);
  const sides = {};
  for (const name of ['small', 'large']) {
    const home = join(tmp, `lookup-${name}`);
    const root = join(home, 'bus');
    const keysDir = readersKeys(home);
    mkdirSync(join(home, 'claude', 'sessions'), { recursive: true });
    mkdirSync(join(root, 'relay'), { recursive: true, mode: 0o700 });
    writeFileSync(join(root, 'relay', 'config.json'), JSON.stringify({ host: 'bench' }), { mode: 0o600 });
    // The 100 signers have no lineage here: under the groups default they are strangers, held.
    await familyPolicy(bin, root);
    const signer = L.createSigner({ keysDir, root, host: 'bench', now: Date.now });
    const newId = L.createIdFactory({ now: Date.now, pid: process.pid + 3, random: Math.random });
    for (let i = 0; i < 100; i++) {
      const node = `signer-${i}`;
      L.writeSignal(root, { kind: 'open' }, newId(), { from: `claude:${node}`, project: 'b', cwd: '/b', fromKind: 'agent', fromId: node, to: '*', body: `m ${i}` }, signer);
    }
    if (name === 'large') {
      // The records sit in trust/ beside the key directory (tools/bus/trust/anchors.ts).
      const trust = join(dirname(keysDir), 'trust');
      for (let i = 0; i < 1000; i++) cpSync(join(trust, 'signer-0.chain'), join(trust, `other-${i}.chain`));
      const list = readFileSync(join(root, 'keys', 'signer-0.pub'), 'utf8');
      for (let h = 0; h < 100; h++) {
        mkdirSync(join(trust, 'hosts', `host-${h}`), { recursive: true, mode: 0o700 });
        for (let n = 0; n < 10; n++) writeFileSync(join(trust, 'hosts', `host-${h}`, `node-${n}.pub`), list, { mode: 0o600 });
      }
    }
    sides[name] = { PATH: process.env.PATH, HOME: home, ATTEND_HOME: root, CLAUDE_CONFIG_DIR: join(home, 'claude'), USER: 'bench' };
  }
  const args = [bin, 'inbox', '--json', '--limit', '100'];
  const t = { small: [], large: [] };
  for (const name of ['small', 'large']) time(args, sides[name], sides[name].HOME);
  for (let r = 0; r < rounds; r++) for (const name of ['small', 'large']) t[name].push(time(args, sides[name], sides[name].HOME));
  const check = spawnSync(process.execPath, args, { env: sides.large, cwd: sides.large.HOME, encoding: 'utf8' });
  const msgs = JSON.parse(check.stdout).messages;
  if (msgs.length !== 100 || msgs.some((m) => m.sig !== 'ok')) throw new Error(`the large side did not verify all 100: ${msgs.length} listed, ${msgs.filter((m) => m.sig === 'ok').length} sig=ok`);
  return { small: median(t.small), large: median(t.large) };
}

/** permit() per message with 1 grant and with 1,000 (issue 14: O(1) per message). */
async function permitCost(bin, quick) {
  const { permit, indexPolicy, DEFAULT_POLICY } = await import(pathToFileURL(join(dirname(dirname(bin)), 'wire/permit.js')).href);
  const lineage = { parentOf: (id) => (id.startsWith('w') ? 'lead' : undefined), isPerson: () => false };
  const checks = quick ? 20_000 : 200_000;
  const perCheck = (grants) => {
    const allow = Array.from({ length: grants }, (_, i) => ({ from: `s${i}`, to: `r${i}` }));
    const ix = indexPolicy({ ...DEFAULT_POLICY, mode: 'groups', allow });
    const runs = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      let ok = 0;
      for (let i = 0; i < checks; i++) if (permit({ from: `s${i % grants}`, fromKind: 'agent', to: `r${(i * 7) % grants}` }, ix, lineage).ok) ok++;
      runs.push(((performance.now() - t0) * 1000) / checks);
      if (ok === 0) throw new Error('no grant matched');
    }
    return median(runs);
  };
  return { one: perCheck(1), thousand: perCheck(1000) };
}

export default async function ({ bin, tmp, quick }) {
  // About signing's cost, not groups: the bench's writers (bench-signer, sensor-*-writer) have
  // no lineage on this bus, so under the groups default their messages would be held.
  await familyPolicy(bin, join(tmp, 'bus'));
  const perm = await permitCost(bin, quick);
  const send = await sendRatio(bin, tmp, quick ? 20 : 40);
  const drain = await drainRatio(bin, tmp, quick ? 3 : 7);
  const sensorN = quick ? 200 : 1000;
  const sensor = await sensorRatio(bin, tmp, sensorN);
  const read = await readRatio(bin, tmp, quick ? 3 : 9);
  const lookupRounds = quick ? 5 : 15;
  const lookup = await lookupScale(bin, tmp, lookupRounds);
  const x = (r) => `**${r.wall.toFixed(2)}×** wall, **${r.cpu.toFixed(2)}×** CPU`;
  return {
    title: 'Signing and verification (issue 14)',
    markdown: [
      `\`attend send\` with signing against the same tree built without the send's signer (goal ≤ 1.15×, issue 20): ${x(send.human)} (human), ${x(send.agent)} (agent). Against the build of ${send.commit}, the commit before signing (which also lacks the fsync, the policy gate and the delivery notes added since): ${x(send.humanBase)} (human), ${x(send.agentBase)} (agent).`,
      '',
      `| command | median wall ms | median CPU ms |`,
      '| --- | ---: | ---: |',
      ...send.rows,
      '',
      `The floor, from the two \`node\` rows of this run: loading node:crypto, importing an Ed25519 key and making one signature add **${send.floor.wall.toFixed(1)} ms** wall (${send.floor.cpu.toFixed(1)} ms CPU) to a fresh Node process. On the unsigned send that alone is **${send.floor.ratioWall.toFixed(2)}×** wall (${send.floor.ratioCpu.toFixed(2)}× CPU): with node:crypto's Ed25519 (spec §7) in a process per send, that leaves the rest of signing a few per cent. What attend adds on top (${(send.floor.signedOver - send.floor.wall).toFixed(1)} ms wall here) is reading the key file and checking its owner and mode, checking the key and trust directories (two stats), the sidecar's write (synced: its data, then one directory sync shared with the message), and the check file beside the key (tools/bus/trust/key-check.ts: one read and two stats, which spare a send deriving the key's public half and id, reading the node's record and reading the bus's list of key ids while their stamps are unchanged). node:crypto loads node:stream eagerly (about a third of its load); commands that neither sign nor verify never load it.`,
      '',
      `Verification of new messages (goal ≤ 1.2×):`,
      '',
      '| reader | unsigned | signed (each verified) | ratio |',
      '| --- | ---: | ---: | ---: |',
      `| \`attend inbox --drain --format plain\` (process, 1,000 new; wall) | ${drain.unsigned.toFixed(0)} ms | ${drain.signed.toFixed(0)} ms | ${(drain.signed / drain.unsigned).toFixed(2)}× |`,
      `| the sensor, \`attend run\` (${sensorN.toLocaleString('en')} new, one at a time; its CPU time) | ${sensor.unsigned.toFixed(0)} ms | ${sensor.signed.toFixed(0)} ms | ${(sensor.signed / sensor.unsigned).toFixed(2)}× |`,
      `| readMessage × 1,000 (the bare read under both, in process) | ${read.unsigned.toFixed(1)} ms | ${read.signed.toFixed(1)} ms | ${(read.signed / read.unsigned).toFixed(2)}× |`,
      '',
      'The drain verifies the signatures of what it presents (the ten messages it shows in full and the senders a collapsed line names), not of the remainder it only counts (`+990 more — attend inbox`); the sensor presents every message and verifies each.',
      '',
      `The unsigned side still looks for a sidecar (one failed open per message), as every reader of this build does. One Ed25519 verification costs ${read.verifyUs.toFixed(0)} µs here (node:crypto, in process): against a bare read of ${read.unsigned.toFixed(0)} µs per message, or a drain's ${drain.unsigned.toFixed(0)} µs per message including its process, that alone sets the floor of the ratios above.`,
      '',
      `Key lookup (issue 20: readers take a local node's keys from its record beside the key directory, one file per signer, never a listing): \`attend inbox --json\` over 100 messages from 100 signers, each verified, **${lookup.small.toFixed(0)} ms** with only their 100 records beside the key directory and **${lookup.large.toFixed(0)} ms** with 1,000 more records and the keys of 1,000 nodes on 100 other machines beside them (${(lookup.large / lookup.small).toFixed(2)}×; medians of ${lookupRounds} interleaved runs).`,
      '',
      `Permission check (\`permit\`, in process, per message, median of 5 runs): **${perm.one.toFixed(2)} µs** with 1 grant, **${perm.thousand.toFixed(2)} µs** with 1,000 grants (${(perm.thousand / perm.one).toFixed(2)}×; the grants are hash-set lookups).`,
    ].join('\n'),
  };
}
