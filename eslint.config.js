import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Tests may reach anything; the rules below are for the code that ships. */
const TEST_FILES = ['**/*.test.ts'];

/** Production code (src/, log/, time/, kube/, agent/, webhook/, native/lib/, cli/) never imports the lab, tests or benchmarks. */
const SHIPS_NO_TEST_CODE = {
  regex: '^(\\.\\./)+(test|lab|bench)/',
  message: 'Production code never imports test/, lab/ or bench/ (they are not in the build or the images).',
};

/** cli/ is the top layer: components export plain functions and typed errors, and the CLI wires them. */
const COMPONENTS_SIT_UNDER_CLI = {
  regex: '^(\\.\\./)+cli/',
  message: 'cli/ is the top layer: a component throws typed errors and exports functions; CliExit and option wiring stay in cli/.',
};

/**
 * One direction between cli/ and lab/: the CLI loads the lab at run time (cli/commands/lab.ts,
 * which states the shape it loads) and the lab, tests included, never imports cli/.
 */
const LAB_STAYS_OFF_CLI = {
  regex: '^(\\.\\./)+cli/',
  message: 'lab/ never imports cli/: the CLI loads the lab at run time (cli/commands/lab.ts); what both need lives outside cli/.',
};

/**
 * cli/'s feature folders (docs/cli.md) hold the commands' bodies; cli/commands/<name>.ts wires
 * them, so a feature never imports a command module (it may use another feature, and the
 * plumbing at cli/'s root).
 */
const CLI_FEATURES = ['check', 'doctor', 'stale', 'manifest', 'webhook'];
const CLI_FEATURE_FILES = CLI_FEATURES.map((feature) => `cli/${feature}/**/*.ts`);
const FEATURES_SIT_UNDER_COMMANDS = {
  regex: '^(\\.\\./)+commands/',
  message: 'A cli/ feature folder is wired by its command (cli/commands/<name>.ts) and never imports one.',
};

/**
 * log/ (the process logger) and time/ (the clock that long-running code is handed) sit under
 * every room that runs: they import nothing of the app, so kube/, the agent, the webhook and
 * the CLI all take them, and src/ stays free of the logger.
 */
const SITS_UNDER_EVERY_ROOM = {
  regex: '^\\.\\./',
  message: 'log/ and time/ import nothing of the app: kube/, agent/, webhook/ and cli/ sit on them.',
};

/**
 * kube/ is the shared Kubernetes access (connection, requests, lists, list/watch) that
 * the agent, the janitor and the CLI's `stale`/`doctor` use: it sits under all of them.
 */
const KUBE_SITS_UNDER_COMPONENTS = {
  group: ['**/agent/**', '**/webhook/**', '**/native/**', 'netlink-native', 'netlink-native/*'],
  message: 'kube/ is shared Kubernetes access: it imports no component (agent/, webhook/) and no native code.',
};

/**
 * The agent's capability folders (docs/design/agent.md) meet at their index.ts: a value from
 * another capability comes through `../<capability>/index.js`; types may come from any file.
 */
const AGENT_CAPABILITIES = ['pods', 'drain', 'plan', 'ipvs', 'conntrack', 'stale', 'runtime', 'handover'];
const AGENT_CAPABILITY_FILES = AGENT_CAPABILITIES.map((c) => `agent/${c}/**/*.ts`);
const CAPABILITIES_MEET_AT_THEIR_INDEX = {
  regex: `^(\\.\\./)+(${AGENT_CAPABILITIES.join('|')})/(?!index\\.js$)`,
  allowTypeImports: true,
  message: 'An agent capability imports another one\'s values only through its index.ts (`../pods/index.js`); types may come from any file.',
};

/** The agent and the webhook are components side by side: what both need lives in src/ or kube/. */
const AGENT_BESIDE_WEBHOOK = {
  group: ['**/webhook/**'],
  message: 'The agent does not import the webhook: what both need lives in src/ (pure) or kube/ (Kubernetes access).',
};

/**
 * native/lib is netlink-native's TypeScript, a package of its own (an npm workspace): it
 * imports nothing outside native/ (its files sit at native/lib/*.ts, so `../../` leaves it).
 */
const NATIVE_LIB_STANDS_ALONE = {
  regex: '^(\\.\\./){2,}',
  message: 'native/lib (netlink-native) imports nothing outside native/: no src/, kube/, agent/, webhook/, cli/, test/, lab/ or bench/.',
};

const WEBHOOK_STAYS_PLAIN = {
  group: ['**/native/**', 'netlink-native', 'netlink-native/*', '**/agent/**'],
  message: 'The webhook image has no compiler and no native addon.',
};

/**
 * src/ is the pure shared core: no I/O (files, sockets, processes, threads, the host, the
 * logger: pino and log/), no component, no CLI; from node:crypto only X509Certificate (parsing
 * a certificate is computation; hashing, signing and random numbers are not src/'s); from
 * netlink-native only `import type` of its types, the one constant of the kernel's ABI that
 * classification tests at run time (IPS_DST_NAT: defined once, in netlink-native/types, a
 * module without I/O), and netlink-native/ipvs-keys: the one text form of IPVS keys, pure
 * functions (no I/O, no addon) that flow pinning's plan and the agent's hold share.
 */
const CORE_IO_MODULES = ['fs', 'fs/*', 'net', 'http', 'https', 'child_process', 'os', 'tls', 'dgram', 'worker_threads'].flatMap((name) => [name, `node:${name}`]);
const CORE_NO_IO = {
  group: ['**/native/**', '**/agent/**', '**/webhook/**', '**/cli/**', ...CORE_IO_MODULES],
  message: 'src/ is the pure shared core: no I/O, no native, no webhook, agent or CLI.',
};
const CORE_NO_LOGGER = {
  group: ['pino', 'pino/*', '**/log/**'],
  message: 'src/ is the pure shared core: it takes a logger (or a callback) from its caller and never builds one (log/ does).',
};
const CORE_STAYS_PURE = [
  CORE_NO_IO,
  CORE_NO_LOGGER,
  {
    group: ['crypto', 'node:crypto'],
    allowImportNames: ['X509Certificate'],
    message: 'src/ takes from node:crypto only X509Certificate (parsing); hashing, signing and random numbers belong to the components.',
  },
  {
    regex: '^netlink-native(?!/(types|ipvs-keys)$)',
    message: "src/ takes from netlink-native only its types (`import type { ... } from 'netlink-native/types'`) and the pure key functions of netlink-native/ipvs-keys.",
  },
  {
    group: ['netlink-native/types'],
    allowTypeImports: true,
    allowImportNames: ['IPS_DST_NAT'],
    message: "src/ takes from netlink-native only its types (`import type { ... } from 'netlink-native/types'`) and IPS_DST_NAT.",
  },
];

/**
 * Shipped code takes node:http's values from kube/node-http.ts (require()): on Node 22+ an ESM
 * import of node:http reads every export, and its lazy undici ones load undici, http2 and
 * worker_threads into every agent. Type imports are free.
 */
const NODE_HTTP_BY_REQUIRE = ['node:http', 'http'].map((name) => ({
  name,
  allowTypeImports: true,
  message: "Take node:http's values from kube/node-http.ts (require()): an ESM import of node:http loads undici, http2 and worker_threads on Node 22+. `import type` is fine.",
}));

/** One config block per file set, each with its whole list of import patterns. */
function importRules(layers) {
  return layers.map(({ files, ignores, patterns, paths }) => ({
    files,
    ...(ignores === undefined ? {} : { ignores }),
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns, ...(paths === undefined ? {} : { paths }) }] },
  }));
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'native/build/**', 'native/dist/**', 'lab/results/**', '.vm-cache/**', '**/*.mjs', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] }],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/explicit-function-return-type': ['error', { allowExpressions: true, allowTypedFunctionExpressions: true, allowHigherOrderFunctions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read the environment only in config loading (src/config) and entry points (cli/).' }],
      'no-restricted-syntax': ['error', { selector: "CallExpression[callee.object.name='process'][callee.property.name='exit']", message: 'process.exit belongs to the entry points (cli/) only.' }],
    },
  },
  {
    files: ['cli/**/*.ts', 'test/**/*.ts', 'lab/**/*.ts', 'bench/**/*.ts', '**/*.test.ts'],
    rules: { 'no-restricted-properties': 'off', 'no-restricted-syntax': 'off' },
  },
  {
    files: ['test/**/*.ts', 'lab/**/*.ts', 'bench/**/*.ts', '**/*.test.ts'],
    rules: { '@typescript-eslint/explicit-function-return-type': 'off' },
  },
  // The import graph, layer by layer (@typescript-eslint/no-restricted-imports): ONE block per
  // file set, the sets disjoint (production files and tests apart, the agent's capability
  // folders apart from the rest of agent/), because a later block's options silently replace
  // an earlier one's for the files both match. test/lint-imports.test.ts checks that no file
  // is matched by two of these blocks.
  ...importRules([
    { files: ['webhook/**/*.test.ts'], patterns: [WEBHOOK_STAYS_PLAIN] },
    { files: ['webhook/**/*.ts'], ignores: TEST_FILES, patterns: [WEBHOOK_STAYS_PLAIN, SHIPS_NO_TEST_CODE, COMPONENTS_SIT_UNDER_CLI], paths: NODE_HTTP_BY_REQUIRE },
    { files: ['kube/**/*.ts'], ignores: TEST_FILES, patterns: [KUBE_SITS_UNDER_COMPONENTS, SHIPS_NO_TEST_CODE, COMPONENTS_SIT_UNDER_CLI], paths: NODE_HTTP_BY_REQUIRE },
    { files: ['agent/**/*.ts'], ignores: [...TEST_FILES, ...AGENT_CAPABILITY_FILES], patterns: [SHIPS_NO_TEST_CODE, COMPONENTS_SIT_UNDER_CLI, AGENT_BESIDE_WEBHOOK], paths: NODE_HTTP_BY_REQUIRE },
    { files: AGENT_CAPABILITY_FILES, ignores: TEST_FILES, patterns: [SHIPS_NO_TEST_CODE, COMPONENTS_SIT_UNDER_CLI, AGENT_BESIDE_WEBHOOK, CAPABILITIES_MEET_AT_THEIR_INDEX], paths: NODE_HTTP_BY_REQUIRE },
    { files: ['native/lib/**/*.ts'], ignores: TEST_FILES, patterns: [NATIVE_LIB_STANDS_ALONE] },
    { files: ['cli/**/*.ts'], ignores: [...TEST_FILES, ...CLI_FEATURE_FILES], patterns: [SHIPS_NO_TEST_CODE], paths: NODE_HTTP_BY_REQUIRE },
    { files: CLI_FEATURE_FILES, ignores: TEST_FILES, patterns: [SHIPS_NO_TEST_CODE, FEATURES_SIT_UNDER_COMMANDS], paths: NODE_HTTP_BY_REQUIRE },
    { files: ['lab/**/*.ts'], patterns: [LAB_STAYS_OFF_CLI] },
    { files: ['src/**/*.test.ts'], patterns: CORE_STAYS_PURE },
    { files: ['src/**/*.ts'], ignores: TEST_FILES, patterns: [...CORE_STAYS_PURE, SHIPS_NO_TEST_CODE] },
    { files: ['log/**/*.ts', 'time/**/*.ts'], ignores: TEST_FILES, patterns: [SITS_UNDER_EVERY_ROOM], paths: NODE_HTTP_BY_REQUIRE },
  ]),
  // The CommonJS launchers (bin/*.cjs): plain JavaScript outside the TypeScript project, so
  // the recommended rules without the type-checked ones; they are entry points (cli/'s rules).
  {
    files: ['**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly', Buffer: 'readonly' },
    },
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      '@typescript-eslint/explicit-function-return-type': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      'no-restricted-properties': 'off',
      'no-restricted-syntax': 'off',
    },
  },
);
