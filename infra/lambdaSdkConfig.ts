/**
 * The Lambda bundles' stand-in for `@smithy/core/config` (esbuild aliases that package to this
 * file: `lambdaAliases` in infra/bundling.ts). It is the SDK's own module, re-exported, except for
 * where a client setting that the code does not pin is looked up: in the environment, then its
 * default, as the SDK does, but without the shared config files (`~/.aws/config`,
 * `~/.aws/credentials`) in between, unless something names them (`namesConfigFiles`).
 *
 * Why: on Lambda those files are not there (there is no home folder with an `.aws` in it), yet the
 * SDK looks in them for every setting the environment lacks, on the first call: a dozen settings,
 * each building two provider errors (with stack traces and its selector's source text) and
 * waiting for two file reads that fail. That was 3-7 ms of a function's first invocation
 * (docs/performance.md). A deployer who does ship a config file names it with AWS_CONFIG_FILE
 * (or AWS_SHARED_CREDENTIALS_FILE, or picks a profile with AWS_PROFILE), and then the SDK's own
 * loader runs, files and all. `npm start`, `npm run invoke`, the scripts and the tests run the
 * sources and keep the SDK's loader.
 *
 * The real module is imported through package.json's `imports` (`#sdk-config-with-files`, which
 * names the package): esbuild applies the alias to the name `@smithy/core/config` as written, so
 * written here it would lead back to this file.
 */
import type { DefaultsMode } from '@smithy/core/client';
import {
  fromStatic,
  type LoadedConfigSelectors,
  loadConfig as loadConfigWithFiles,
  memoize,
  NODE_REGION_CONFIG_OPTIONS,
  resolveDefaultsModeConfig as resolveDefaultsModeWithFiles,
} from '#sdk-config-with-files';

export * from '#sdk-config-with-files';

/** The environment variables that point the SDK at a config file or a profile in one. */
const CONFIG_FILE_VARIABLES = ['AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_PROFILE'] as const;

type LoadConfig = typeof loadConfigWithFiles;

/**
 * Where the defaults mode is read from: the SDK's NODE_DEFAULTS_MODE_CONFIG_OPTIONS
 * (@smithy/core, config/defaults-mode/defaultsModeConfig.js), which its package does not export.
 * test/infra/lambdaSdkConfig.test.ts holds the two to the same answers.
 */
const DEFAULTS_MODE_SELECTORS: LoadedConfigSelectors<DefaultsMode> = {
  environmentVariableSelector: (env) => env.AWS_DEFAULTS_MODE as DefaultsMode | undefined,
  configFileSelector: (profile) => profile.defaults_mode as DefaultsMode | undefined,
  default: 'legacy',
};

/** Whether the environment or the client's own settings name a config file or a profile. */
const namesConfigFiles = (configuration: Parameters<LoadConfig>[1] = {}): boolean =>
  CONFIG_FILE_VARIABLES.some((name) => process.env[name]) ||
  Boolean(configuration.profile || configuration.filepath || configuration.configFilepath);

/**
 * The SDK's `loadConfig`, less the files when nothing names them: the environment's value, else the
 * default. As in the SDK, a value the selector refuses (`AWS_USE_FIPS_ENDPOINT=maybe`) falls through
 * to the default, and the answer is kept after the first ask.
 */
export const loadConfig: LoadConfig = (selectors, configuration = {}) => {
  if (namesConfigFiles(configuration)) return loadConfigWithFiles(selectors, configuration);
  const { environmentVariableSelector, default: fallback } = selectors;
  const { signingName, logger } = configuration;
  const fromDefault = fromStatic(fallback);
  return memoize(async () => {
    try {
      const value = environmentVariableSelector(process.env, { signingName, logger });
      if (value !== undefined) return value;
    } catch {
      // The SDK's chain moves on to the next source; so do we.
    }
    return fromDefault();
  });
};

/**
 * The SDK's own, given the defaults mode and region through the `loadConfig` above: its default
 * arguments would call the SDK's file-reading `loadConfig` (a relative import, which no alias reaches).
 */
export const resolveDefaultsModeConfig: typeof resolveDefaultsModeWithFiles = ({
  region = loadConfig(NODE_REGION_CONFIG_OPTIONS),
  defaultsMode = loadConfig(DEFAULTS_MODE_SELECTORS),
} = {}) => resolveDefaultsModeWithFiles({ region, defaultsMode });
