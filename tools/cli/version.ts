// Kept in step with package.json by test/unit/cli.test.ts.
export const VERSION = '0.1.0';
