// Kept in step with package.json by test/e2e/cli.test.ts ("attend --version matches package.json").
export const VERSION = '0.1.0';
