/**
 * `npm run rehearse -- --stage <stage>`: every alarm of a synthesized stage rehearsed offline
 * (tools/stage-emulator/src/alarms/rehearsal.ts): a healthy day and a fault per alarm, on the stage
 * run as deployed. This file tells the rehearsal of this app: its requests, and how a key is issued.
 */
import '../local/requireNode22.mjs';
import { CONTROL_TABLE_OUTPUT } from '../infra/names.ts';
import { MAX_CREATES_PER_DAY } from '../lib/domain/keyScope.ts';
import { DEFAULT_OUTDIR, EDGE_ERRORS, OFFLINE_PARAMETERS, STAGE_APP, STAGE_STACKS } from '../local/stageApp.ts';
import { generateApiKey, runKeys } from '../tools/keys/keys.ts';
import { runRehearseCommand } from '@petstore/stage-emulator/rehearse';

const pet = (n: number) => ({ name: `Rehearsal ${n}`, categoryId: 1 + (n % 3), status: 'available' });

await runRehearseCommand(process.argv.slice(2), {
  app: STAGE_APP,
  stacks: STAGE_STACKS,
  outdir: DEFAULT_OUTDIR,
  offlineParameters: OFFLINE_PARAMETERS,
  edgeErrors: EDGE_ERRORS,
  operations: {
    listPets: (n) => ({ method: 'GET', path: `/pets?limit=${1 + (n % 20)}` }),
    getPet: (n, created) => ({ method: 'GET', path: `/pets/${created[n % created.length] ?? 1}` }),
    createPet: (n) => ({
      method: 'POST',
      path: '/pets',
      body: pet(n),
      headers: { 'Idempotency-Key': `rehearsal-${process.pid}-${n}-${Math.random().toString(36).slice(2)}` },
    }),
  },
  writeOperation: 'createPet',
  createdId: (body) => (body as { id?: number } | undefined)?.id?.toString(),
  notFound: (n) => ({ method: 'GET', path: `/pets/${900_000 + n}` }),
  authorization: (key) => ({ Authorization: `Bearer ${key}` }),
  mistypedKey: () => generateApiKey().key,
  async issueKey(api, { stage, manyCreates = false }) {
    const out: string[] = [];
    const argv = ['create', '--stage', stage, '--table', api.output(CONTROL_TABLE_OUTPUT)];
    const code = await runKeys(
      [
        ...argv,
        '--endpoint',
        api.storeEndpoint,
        '--description',
        'alarm rehearsal',
        ...(manyCreates ? ['--creates-per-day', String(MAX_CREATES_PER_DAY)] : []),
      ],
      {
        out: (line) => out.push(line),
        err: (line) => out.push(line),
        stdoutIsTerminal: true,
        env: { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'operator', AWS_SECRET_ACCESS_KEY: 'operator' },
      },
    );
    const key = /psk_[0-9a-f]{12}_[A-Za-z0-9_-]+/.exec(out.join('\n'))?.[0];
    if (code !== 0 || !key) throw new Error(`keys create failed: ${out.join(' ')}`);
    return key;
  },
});
