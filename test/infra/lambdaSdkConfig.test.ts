/**
 * The SDK settings of the Lambda bundles (infra/lambdaSdkConfig.ts): read from the environment,
 * then the SDK's defaults, without the shared config files unless a variable names one; in every
 * other case resolved exactly as the SDK as published resolves them. The functions' own client
 * (./sdkConfigProbe.ts) is probed twice, each time in a fresh process: once built as a Lambda
 * bundle, once run from source. The home folder given to them holds a `~/.aws/config` that sets
 * every probed setting to something other than its default.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundling.ts';
import { buildBundle, type BuiltBundle } from '../../tools/bench/bundles.ts';

const run = promisify(execFile);
const PROBE = 'test/infra/sdkConfigProbe.ts';

/** Every probed setting, as the config file below sets it (none is the SDK's default). */
const FROM_FILE = {
  useFipsEndpoint: true,
  useDualstackEndpoint: true,
  retryMode: 'adaptive',
  accountIdEndpointMode: 'disabled',
  userAgentAppId: 'from-file',
  authSchemePreference: ['sigv4a'],
  defaultsMode: 'standard',
  endpointDiscoveryEnabled: true,
};
const CONFIG_FILE_LINES = [
  'use_fips_endpoint = true',
  'use_dualstack_endpoint = true',
  'retry_mode = adaptive',
  'account_id_endpoint_mode = disabled',
  'sdk_ua_app_id = from-file',
  'auth_scheme_preference = sigv4a',
  'defaults_mode = standard',
  'endpoint_discovery_enabled = true',
];

/** Each probed setting from its environment variable, with values that differ from the file's. */
const FROM_ENVIRONMENT = {
  AWS_USE_FIPS_ENDPOINT: 'false',
  AWS_USE_DUALSTACK_ENDPOINT: 'true',
  AWS_RETRY_MODE: 'standard',
  AWS_ACCOUNT_ID_ENDPOINT_MODE: 'required',
  AWS_SDK_UA_APP_ID: 'from-env',
  AWS_AUTH_SCHEME_PREFERENCE: 'sigv4',
  AWS_DEFAULTS_MODE: 'in-region',
  AWS_ENABLE_ENDPOINT_DISCOVERY: 'true',
};

let dir: string;
let bundleFile: string;
let probeBundle: BuiltBundle;
/** A home folder with `~/.aws/config` (a default profile and a `petstore` one), and one with nothing. */
let home: string;
let emptyHome: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'petstore-sdk-config-'));
  home = join(dir, 'home');
  emptyHome = join(dir, 'empty-home');
  mkdirSync(join(home, '.aws'), { recursive: true });
  mkdirSync(emptyHome);
  const profile = (name: string) => [name, ...CONFIG_FILE_LINES].join('\n');
  writeFileSync(join(home, '.aws', 'config'), `${profile('[default]')}\n${profile('[profile petstore]')}\n`);
  // Built with the functions' own options; the name only places the build's output, which is not written.
  probeBundle = await buildBundle('getPet', PROBE);
  bundleFile = join(dir, 'index.mjs');
  writeFileSync(bundleFile, probeBundle.code);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The probed settings in a fresh process: the Lambda bundle's, or the source's (the SDK as published). */
async function settings(how: 'bundle' | 'source', homeFolder: string, env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const args = how === 'bundle' ? [bundleFile] : ['--import', 'tsx', PROBE];
  const { stdout } = await run(process.execPath, args, {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: homeFolder, NODE_NO_WARNINGS: '1', ...env },
    encoding: 'utf8',
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}

describe('the Lambda bundles resolve the SDK settings', () => {
  it('without ~/.aws/config when nothing names it: the SDK defaults, where the SDK as published reads the file', async () => {
    const [bundled, defaults, fromSource] = await Promise.all([
      settings('bundle', home),
      settings('source', emptyHome),
      settings('source', home),
    ]);
    expect(fromSource).toEqual(FROM_FILE);
    expect(bundled).toEqual(defaults);
    for (const [name, value] of Object.entries(FROM_FILE)) expect(bundled[name], name).not.toEqual(value);
  });

  it('from the environment as the SDK does, the file notwithstanding', async () => {
    const [bundled, fromSource] = await Promise.all([settings('bundle', home, FROM_ENVIRONMENT), settings('source', home, FROM_ENVIRONMENT)]);
    expect(bundled).toEqual(fromSource);
    expect(bundled).toMatchObject({ accountIdEndpointMode: 'required', userAgentAppId: 'from-env', defaultsMode: 'in-region' });
  });

  it('with the default where the SDK refuses a value in the environment', async () => {
    const refused = { AWS_USE_FIPS_ENDPOINT: 'maybe', AWS_USE_DUALSTACK_ENDPOINT: '1' };
    const [bundled, fromSource] = await Promise.all([settings('bundle', emptyHome, refused), settings('source', emptyHome, refused)]);
    expect(bundled).toEqual(fromSource);
    expect(bundled).toMatchObject({ useFipsEndpoint: false, useDualstackEndpoint: false });
  });

  it.each([
    ['AWS_CONFIG_FILE names the file', () => emptyHome, () => ({ AWS_CONFIG_FILE: join(home, '.aws', 'config') })],
    ['AWS_PROFILE picks a profile', () => home, () => ({ AWS_PROFILE: 'petstore' })],
    ['AWS_SHARED_CREDENTIALS_FILE names a credentials file', () => home, () => ({ AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials') })],
  ])('from the files, as the SDK does, when %s', async (_, homeFolder, env) => {
    const [bundled, fromSource] = await Promise.all([settings('bundle', homeFolder(), env()), settings('source', homeFolder(), env())]);
    expect(bundled).toEqual(fromSource);
    expect(bundled).toEqual(FROM_FILE);
  });

  it("bundle the SDK's config module once, behind the stand-in", () => {
    const inputs = Object.keys(probeBundle.inputs);
    expect(inputs).toContain('infra/lambdaSdkConfig.ts');
    expect(inputs.filter((file) => /@smithy\/core\/dist-[a-z]+\/submodules\/config\/index\.js$/.test(file))).toEqual([
      'node_modules/@smithy/core/dist-es/submodules/config/index.js',
    ]);
  });
});
