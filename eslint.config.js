// Lint rules for the whole repository. Formatting is Prettier's (npm run format); this file holds
// correctness rules and the architecture's import boundaries.
import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Domain folders: they never reach the HTTP layer. */
const DOMAIN = ['models', 'inference', 'providers', 'access', 'agents', 'mcp', 'tools', 'memory', 'images', 'media', 'channel', 'cloud', 'config', 'store'];
const httpLayer = {
  patterns: [
    { group: ['fastify', 'fastify/*', '@fastify/*'], message: 'Domain code never imports Fastify: routes/ convert between HTTP and the domain.' },
    { group: ['**/routes/*', '**/routes', '**/http/*', '**/http', '**/app.js'], message: 'Domain code never imports routes/, http/ or app.ts.' },
  ],
};

/**
 * Tests assert what happens, never how fast (docs/development.md): no fixed sleeps, no deadline
 * loops, no measured durations. A test waits with expect.poll (helpers/until.ts in hooks and
 * helpers) or for the event itself. Where a delay is the thing under test (a mock server that is
 * slow on purpose), the line says so: `// eslint-disable-next-line no-restricted-syntax -- <why>`.
 */
const now = "CallExpression[callee.object.name=/^(Date|performance)$/][callee.property.name='now']";
const timingInTests = [
  {
    selector: "NewExpression[callee.name='Promise'] CallExpression[callee.name='setTimeout']",
    message: 'No fixed sleep in a test: wait for the event itself or with expect.poll (or until() from tests/helpers/until.ts).',
  },
  {
    selector: "CallExpression[callee.property.name='waitForTimeout']",
    message: 'No fixed sleep in a browser test: wait for the element, the function or the request itself.',
  },
  {
    selector: "CallExpression[callee.object.name='performance'][callee.property.name='now']",
    message: 'Tests never time anything: speed is for the benchmarks. Assert what happened instead.',
  },
  {
    selector: `BinaryExpression[operator=/^[<>]=?$/] > ${now}`,
    message: 'No deadline loop on the clock in a test: use expect.poll, or until() from tests/helpers/until.ts.',
  },
  {
    selector: `CallExpression[callee.name='expect'] > BinaryExpression[operator='-'] > ${now}`,
    message: 'No elapsed time inside expect(): assert what happened, not how long it took.',
  },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'build/', '.svelte-kit/', 'dist/', 'bench/results/', 'web/static/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs['flat/recommended'],
  {
    languageOptions: { globals: { ...globals.node }, ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/shared/src/*', '**/shared/src/**'], message: 'Import wire types as #shared/api/...' }] }],
    },
  },
  {
    files: [`companion/src/{${DOMAIN.join(',')}}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', httpLayer] },
  },
  {
    // The tools folder serves agents and MCP and imports neither (nor memory: the memory tools get it handed in).
    files: ['companion/src/tools/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...httpLayer.patterns,
            { group: ['**/agents/*', '**/mcp/*', '**/memory/*'], message: 'tools/ is used by agents/ and mcp/ and imports neither (nor memory/).' },
          ],
        },
      ],
    },
  },
  {
    // The secure channel's two sides share only channel/x509.ts: the host side never imports the device side.
    files: ['companion/src/channel/host/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...httpLayer.patterns, { group: ['**/device/*'], message: 'channel/host/ (this machine as the host) never imports channel/device/.' }] },
      ],
    },
  },
  {
    // ... and the device side never imports the host side.
    files: ['companion/src/channel/device/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...httpLayer.patterns,
            { group: ['**/host/*'], message: 'channel/device/ (this machine as a paired device) never imports channel/host/.' },
          ],
        },
      ],
    },
  },
  {
    // node-llama-cpp, @peculiar/x509 and the MCP SDK are loaded on first use: a value import at the top of a file would load them at every start of the companion.
    files: ['companion/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'node-llama-cpp',
              allowTypeImports: true,
              message: 'Use loadBinding() or binding() of inference/binding.ts: node-llama-cpp is loaded on first use.',
            },
            { name: '@peculiar/x509', allowTypeImports: true, message: 'Certificates go through channel/x509.ts, which loads @peculiar/x509 on first use.' },
          ],
          patterns: [
            {
              group: ['@modelcontextprotocol/sdk/*'],
              allowTypeImports: true,
              message: 'Use loadSdk() or sdk() of mcp/sdk.ts: the MCP SDK is loaded on first use.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['shared/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!\\./)', message: 'shared/ holds plain types: it imports nothing but its own files.' }] }],
    },
  },
  {
    files: ['web/src/**/*.{ts,svelte}', 'tests/web/**/*.ts', 'tests/browser/**/*.ts'],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    // The app is served at / with no base path, so links and goto() need no resolve().
    rules: { 'svelte/no-navigation-without-resolve': 'off' },
  },
  {
    files: ['tests/**/*.ts'],
    // Tests poke at wire shapes loosely on purpose.
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-restricted-syntax': ['error', ...timingInTests] },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'] } },
  },
);
