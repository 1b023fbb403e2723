/**
 * A synthesized stage started as deployed for a test (local/deployed/deployedApi.ts), its DynamoDB
 * calls through a fault proxy, with an API key issued as an operator issues one after a deploy.
 */
import { stackName } from '../../infra/stages.ts';
import type { Stage } from '../../lib/domain/stages.ts';
import { startDeployedApi, type DeployedApi, type DeployedApiOptions } from '../../local/deployed/deployedApi.ts';
import { DEFAULT_OUTDIR, ensureCloudAssembly } from '../../local/deployed/freshAssembly.ts';
import { runKeys } from '../../scripts/keys.ts';
import { startFaultProxy, type FaultProxy } from './faultProxy.ts';

/** What `cdk deploy` is given for parameters without a default (production's alarm subscriber). */
export const DEPLOY_PARAMETERS = { AlarmEmail: 'ops@example.com' };

export interface RunningStage {
  api: DeployedApi;
  proxy: FaultProxy;
  key: string;
  logs: string[];
  close(): Promise<void>;
}

/** The stage from a fresh cloud assembly, gate decisions recorded; `options` add to or change the defaults. */
export async function startStage(stage: Stage, options: Partial<DeployedApiOptions> = {}): Promise<RunningStage> {
  await ensureCloudAssembly(DEFAULT_OUTDIR, { quiet: true });
  const logs: string[] = [];
  let proxy: FaultProxy | undefined;
  const api = await startDeployedApi({
    stackName: stackName(stage),
    outdir: DEFAULT_OUTDIR,
    port: 0,
    parameters: DEPLOY_PARAMETERS,
    recordDecisions: true,
    log: (line) => logs.push(line),
    storeFront: async (endpoint) => (proxy = await startFaultProxy(endpoint)).endpoint,
    ...options,
  });
  const close = async () => {
    await api.close();
    await proxy?.close();
  };
  try {
    return { api, proxy: proxy!, key: await issueKey(stage, api), logs, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** `npm run keys -- create`, exactly as an operator runs it after a deploy. */
export async function issueKey(stage: Stage, api: DeployedApi): Promise<string> {
  const out: string[] = [];
  const code = await runKeys(
    ['create', '--stage', stage, '--table', api.controlTableName, '--endpoint', api.storeEndpoint, '--description', 'deployed-runner test'],
    { out: (line) => out.push(line), err: (line) => out.push(line), env: { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'operator', AWS_SECRET_ACCESS_KEY: 'operator' } },
  );
  const key = out.join('\n').match(/psk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/)?.[0];
  if (code !== 0 || !key) throw new Error(`keys create failed: ${out.join('\n')}`);
  return key;
}
