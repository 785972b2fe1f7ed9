// The one way into chat's UI modules. React and react-reconciler choose their development
// or production build from NODE_ENV when they are first loaded, and NODE_ENV is unset for
// an installed CLI, which meant the development build: several times slower per render and,
// under 50 messages/s, a heap that grew by ~20 MB/s until it hit the limit (issue #5
// benchmark). So the UI is loaded with NODE_ENV=production, and the caller's value is put
// back once the modules are in memory, so nothing attend spawns sees the change.
// Tests import the modules directly and keep React's development checks.
// Ink likewise reads the CI variables once, when it is first imported, and under CI draws
// nothing until the app exits; chat only starts on a TTY, so that detection must not apply
// (CI runs set CI=true, and the tmux e2e would see a blank screen). Those are hidden the
// same way while the modules load.

type ChatUi = typeof import('./ui.js');

export async function loadChatUi(): Promise<ChatUi> {
  const saved = Object.entries(process.env).filter(([k]) => k === 'NODE_ENV' || k === 'CI' || k === 'CONTINUOUS_INTEGRATION' || k.startsWith('CI_'));
  for (const [k] of saved) delete process.env[k];
  process.env.NODE_ENV = 'production';
  try {
    return await import('./ui.js');
  } finally {
    delete process.env.NODE_ENV;
    for (const [k, v] of saved) process.env[k] = v;
  }
}
