/**
 * The deploy runbook (docs/deploying.md, then docs/operating.md), held to the templates where it states facts about them: the cost
 * table's counts and sums, what a production teardown keeps, the web ACL's rules, the alarm
 * parameter's name. Prices themselves cannot be tested offline (docs/deploying.md says where to check).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PetStoreAccountStack } from '../../infra/accountStack.ts';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { ALARM_EMAIL_PARAMETER } from '../../infra/constructs/monitoring.ts';
import { BOOTSTRAP_QUALIFIERS } from '../../infra/names.ts';
import { RATE_WINDOW_SECONDS } from '../../infra/constructs/firewall.ts';
import { STAGE_SETTINGS, STAGES, type Stage } from '../../infra/stages.ts';
import { routes } from '../../lib/domain/routes.ts';
import { controlKeys } from '../../lib/store/table.ts';
import { parseCommand } from '../../tools/keys/commandLine.ts';
import { documentedBlocks } from '../docs/shellBlocks.ts';
import { alarmNamed, props, synthesizedStages } from './templates.ts';

const of = synthesizedStages();

/** The runbook: deploying, then operating, each section a `##` heading. */
const runbook = ['deploying.md', 'operating.md']
  .map((doc) => readFileSync(join(PROJECT_ROOT, 'docs', doc), 'utf8'))
  .join('\n');
const section = (title: string): string => {
  const start = runbook.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`no "## ${title}" in docs/deploying.md or docs/operating.md`);
  const end = runbook.indexOf('\n## ', start + 1);
  return runbook.slice(start, end < 0 ? undefined : end);
};
/** A section's text with line breaks and runs of spaces as single spaces, for phrases that wrap. */
const prose = (title: string): string => section(title).replace(/\s+/g, ' ');

/** The rows of every Markdown table in `text`, as cells. */
function tables(text: string): string[][][] {
  const found: string[][][] = [];
  let current: string[][] | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) {
      current = undefined;
      continue;
    }
    const cells = line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
    if (cells.every((cell) => /^-+$/.test(cell))) continue;
    if (!current) {
      current = [];
      found.push(current);
    }
    current.push(cells);
  }
  return found;
}

/** A cell's amount in dollars: the last `$x.yy` in it, 0 for "none" or "about $0". */
function dollars(cell: string): number {
  const amounts = [...cell.matchAll(/\$(\d+(?:\.\d+)?)/g)].map((match) => Number(match[1]));
  if (/^(none|about \$0)$/.test(cell) || /^\$0 /.test(cell)) return 0;
  if (amounts.length === 0) throw new Error(`no amount in "${cell}"`);
  return amounts[amounts.length - 1]!;
}

/** The types of every resource `cdk destroy` leaves behind. */
const retained = (stage: Stage) =>
  Object.values(of(stage).json.Resources)
    .filter((resource) => resource.DeletionPolicy === 'Retain')
    .map((resource) => resource.Type);

describe('the deploy runbook (docs/deploying.md, docs/operating.md)', () => {
  it('has the sections a first-time deployer needs, in order', () => {
    const order = [
      'Before the first deploy',
      'Who may do what',
      'Region and account',
      'Costs',
      'First deploy, step by step',
      'When a first deploy fails',
      'Tear down, and deploy again',
      'Web firewall',
      'Alarms',
      'API keys',
    ].map((title) => runbook.indexOf(`\n## ${title}\n`));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('sums each cost table to its total, per stage', () => {
    const costTables = tables(section('Costs'));
    expect(costTables).toHaveLength(2);
    for (const table of costTables) {
      const [header, ...rows] = table;
      const totalRow = rows.find((row) => row[0]!.startsWith('**Total'))!;
      expect(totalRow, header!.join('|')).toBeDefined();
      for (const stage of STAGES) {
        const column = header!.indexOf(stage);
        const sum = rows.filter((row) => row !== totalRow).reduce((total, row) => total + dollars(row[column]!), 0);
        expect(dollars(totalRow[column]!), `${stage}: ${header!.join('|')}`).toBeCloseTo(sum, 2);
      }
    }
  });

  it('counts in the cost table the alarms, and the web ACL rules, the templates have', () => {
    const [atRest] = tables(section('Costs'));
    const [header, ...rows] = atRest!;
    const alarmsRow = rows.find((row) => row[0]!.startsWith('CloudWatch alarms'))!;
    const wafRow = rows.find((row) => row[0]!.startsWith('WAF web ACL'))!;
    for (const stage of STAGES) {
      const cell = alarmsRow[header!.indexOf(stage)]!;
      const alarms = of(stage).ofType('AWS::CloudWatch::Alarm').length;
      expect(cell, stage).toBe(`${alarms}: $${(alarms * 0.1).toFixed(2)}`);
      const acl = of(stage).ofType('AWS::WAFv2::WebACL')[0];
      const wafCell = wafRow[header!.indexOf(stage)]!;
      if (!acl) {
        expect(wafCell, stage).toBe('none');
        continue;
      }
      const rules = (props(acl[1]).Rules as unknown[]).length;
      expect(wafRow[0]).toContain(`its ${rules} rules`);
      expect(dollars(wafCell)).toBe(5 + rules);
    }
    expect(prose('Alarms')).toContain(
      `${of('staging').ofType('AWS::CloudWatch::Alarm').length} alarms in staging, ${of('production').ofType('AWS::CloudWatch::Alarm').length} in production`,
    );
  });

  it('lists in the Alarms table every alarm the templates have, and none they lack', () => {
    const [alarmTable] = tables(section('Alarms'));
    const operations = routes.map((route) => route.operation[0]!.toUpperCase() + route.operation.slice(1));
    const documented = new Set(
      alarmTable!
        .slice(1)
        .flatMap((row) => [...row[0]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!))
        .flatMap((name) =>
          name.startsWith('<Operation>') ? operations.map((op) => name.replace('<Operation>', op)) : [name],
        ),
    );
    const inTemplates = new Set(
      STAGES.flatMap((stage) =>
        of(stage)
          .ofType('AWS::CloudWatch::Alarm')
          .map(([, alarm]) => String(props(alarm).AlarmName).replace(`petstore-${stage}-`, '')),
      ),
    );
    expect([...documented].sort()).toEqual([...inTemplates].sort());
  });

  it('tells what a production teardown keeps: exactly what the template retains', () => {
    const teardown = prose('Tear down, and deploy again');
    expect(retained('production').sort()).toEqual([
      'AWS::Backup::BackupVault',
      'AWS::DynamoDB::Table',
      'AWS::DynamoDB::Table',
      'AWS::Logs::LogGroup',
      'AWS::Logs::LogGroup',
      'AWS::Logs::LogGroup',
      'AWS::Logs::LogGroup',
      'AWS::Logs::LogGroup',
      'AWS::Logs::LogGroup',
      'AWS::Logs::LogGroup',
    ]);
    expect(teardown).toContain('both tables');
    expect(teardown).toContain('the seven log groups');
    expect(teardown).toContain('the backup vault with its recovery points');
    // Staging keeps nothing; the account-wide role and setting are the account stack's (infra/accountStack.ts).
    expect(retained('staging')).toEqual([]);
    expect(teardown).toContain('`PetStore-account` keeps');
    expect(of('production').stack.terminationProtection).toBe(true);
    expect(teardown).toContain(
      'update-termination-protection --no-enable-termination-protection --stack-name PetStore-production',
    );
    expect(prose('When a first deploy fails')).toContain(
      'update-termination-protection --no-enable-termination-protection --stack-name PetStore-production',
    );
  });

  it('names tables as the templates do: by CloudFormation, found through the ControlTableName output', () => {
    for (const stage of STAGES) {
      for (const [, table] of of(stage).ofType('AWS::DynamoDB::Table'))
        expect(props(table)).not.toHaveProperty('TableName');
      expect(of(stage).json.Outputs).toHaveProperty('ControlTableName');
    }
    expect(prose('API keys')).toContain('`ControlTableName` output');
    expect(runbook).not.toMatch(/`petstore-<stage>-control`/);
  });

  it('gives production its alarm subscriber the way the template asks for it', () => {
    const parameter = (of('production').json.Parameters as Record<string, Record<string, unknown>>)[
      ALARM_EMAIL_PARAMETER
    ]!;
    expect(parameter).not.toHaveProperty('Default');
    expect(prose('First deploy, step by step')).toContain(
      `npx cdk deploy PetStore-production --parameters ${ALARM_EMAIL_PARAMETER}=ops@example.com`,
    );
    expect(prose('When a first deploy fails')).toContain(`--parameters ${ALARM_EMAIL_PARAMETER}=`);
  });

  it("states the web ACL's rate limit and its reason from the stage settings", () => {
    const { webAcl, throttling, alarms } = STAGE_SETTINGS.production;
    if (!webAcl) throw new Error('production has a web ACL');
    const firewall = prose('Web firewall');
    const limit = webAcl.requestsPerAddressPer5Minutes;
    expect(firewall).toContain(`${limit.toLocaleString('en-US')} requests in any ${RATE_WINDOW_SECONDS / 60} minutes`);
    expect(firewall).toContain(`(${limit / RATE_WINDOW_SECONDS} a second sustained)`);
    expect(firewall).toContain(`the stage's throttle (${throttling.rateLimit} a second)`);
    expect(section('Alarms')).toMatch(new RegExp(`\\| \`WafBlocked\` \\|.*\\| ${alarms.wafBlockedRequests} / min \\|`));
    // The concurrency alarms as the templates set them.
    const threshold = (stage: Stage, name: string) => alarmNamed(of(stage), stage, name).Threshold as number;
    const row = (name: string) =>
      section('Alarms')
        .split('\n')
        .find((line) => line.startsWith(`| \`${name}\``))!;
    expect(row('AuthorizerConcurrency')).toMatch(
      new RegExp(
        `\\| ${threshold('staging', 'AuthorizerConcurrency')} \\| ${threshold('production', 'AuthorizerConcurrency')} \\(80 % of its reserved `,
      ),
    );
    expect(row('<Operation>Concurrency')).toContain(
      `listPets ${threshold('production', 'ListPetsConcurrency')}, createPet ${threshold('production', 'CreatePetConcurrency')}, getPet ${threshold('production', 'GetPetConcurrency')} |`,
    );
  });

  it("sends each stage's deployers and key operators to their policies, filled by npm run policy, which grant the control table's API-key partition only", () => {
    const who = section('Who may do what');
    for (const file of ['deployer-staging.json', 'deployer-production.json', 'key-operator.json'])
      expect(who).toContain(`[\`infra/policies/${file}\`](../infra/policies/${file})`);
    expect(who).not.toContain('```json');
    // Filled by the step that refuses an unset account or Region (test/scripts/policy.test.ts), never by sed.
    expect(who).toContain('npm run -s policy -- "$@" --account "$ACCOUNT" --region "$AWS_REGION"');
    expect(runbook).not.toMatch(/sed -e "s\/<account>/);
    expect(who).toContain('--cloudformation-execution-policies "$policies"');
    expect(who).toContain('--custom-permissions-boundary "cdk-$2-boundary" --apply-permissions-boundary-to-all-roles');
    for (const [stack, qualifier] of Object.entries(BOOTSTRAP_QUALIFIERS))
      expect(who).toContain(`bootstrap PetStore-${stack} ${qualifier}`);
    const onControlTable = ['deployer-staging.json', 'deployer-production.json', 'key-operator.json'].flatMap((file) =>
      (
        JSON.parse(readFileSync(join(PROJECT_ROOT, 'infra', 'policies', file), 'utf8')) as {
          Statement: { Sid: string; Resource: string; Condition?: unknown }[];
        }
      ).Statement.filter((statement) => statement.Resource.includes('ControlTable')),
    );
    expect(onControlTable.map((statement) => statement.Sid)).toEqual(['ApiKeyItems']);
    expect(onControlTable[0]!.Condition).toEqual({
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [controlKeys.apiKeys] },
    });
    // A stage's deployer may not assume the account stack's bootstrap roles: it deploys its stack alone.
    expect(prose('First deploy, step by step')).toContain('npx cdk deploy PetStore-staging --exclusively');
  });

  it("says how the functions' runtime is upgraded before Lambda deprecates it, naming the runtime the template uses", () => {
    const upgrade = prose('Upgrading the Lambda runtime');
    const runtimes = new Set(
      STAGES.flatMap((stage) =>
        of(stage)
          .ofType('AWS::Lambda::Function')
          .map(([, fn]) => String(props(fn).Runtime)),
      ),
    );
    expect([...runtimes]).toEqual(['nodejs22.x']);
    expect(upgrade).toContain('Every function, the key authorizer included, runs on `nodejs22.x`');
    expect(upgrade).toContain('**30 April 2027**');
    for (const file of [
      'infra/constructs/functions.ts',
      'infra/bundle/bundling.ts',
      'tools/stage-emulator/src/lambdaFunction.ts',
      'test/infra/functions.test.ts',
    ]) {
      expect(upgrade, file).toContain(file);
      expect(readFileSync(join(PROJECT_ROOT, file), 'utf8'), file).toMatch(/nodejs22\.x|NODEJS_22_X|node22/);
    }
  });

  it('issues the production smoke key as a read key, which keys accepts, and smoke-tests production read-only', () => {
    const steps = section('First deploy, step by step').split('\n');
    const at = steps.findIndex((line) => line.startsWith('npm run smoke -- --base <production ApiUrl>'));
    expect(steps[at]).toContain('--read-only');
    const create = steps
      .slice(0, at)
      .reverse()
      .find((line) => line.startsWith('npm run keys -- create --stage production'))!;
    const argv = /^npm run keys -- (.*?)(\s+#.*)?$/
      .exec(create)![1]!
      .match(/"[^"]*"|\S+/g)!
      .map((word) => word.replace(/^"|"$/g, ''));
    const { command } = parseCommand(argv, {});
    expect(command).toMatchObject({ name: 'create', stage: 'production', scope: 'read' });
  });

  it('never sends operators to WAF sampled requests, which carry the bearer key; blocked requests are in a redacted log', () => {
    const everyDocument = [
      'README.md',
      ...readdirSync(join(PROJECT_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
        .filter((doc) => doc.endsWith('.md'))
        .map((doc) => join('docs', doc)),
    ];
    for (const doc of everyDocument)
      expect(readFileSync(join(PROJECT_ROOT, doc), 'utf8'), doc).not.toContain('get-sampled-requests');
    const firewall = prose('Web firewall');
    expect(firewall).toContain('`aws-waf-logs-petstore-<stage>-<first part of the stack id>`');
    expect(firewall).toContain('`BlockedRequestsLogGroup`');
    expect(firewall).toContain('`Authorization` and `Idempotency-Key` headers read `REDACTED`');
  });

  it('sets the Region, read in order, before the first step that fills a policy with it (an unset one is refused: test/scripts/policy.test.ts)', () => {
    const commands = documentedBlocks()
      .filter((block) => block.where.startsWith('docs/deploying.md:'))
      .flatMap((block) => block.commands);
    const setsRegion = commands.findIndex((command) => /^export\b.*\bAWS_REGION=[\w-]+/.test(command));
    const fillsPolicy = commands.findIndex((command) => /\$AWS_REGION|npm run (-s )?policy|^policy /.test(command));
    expect(setsRegion, 'docs/deploying.md exports AWS_REGION').toBeGreaterThanOrEqual(0);
    expect(fillsPolicy, commands[fillsPolicy]).toBeGreaterThan(setsRegion);
  });

  it("revokes each stage's smoke key once its smoke check has run", () => {
    const steps = section('First deploy, step by step')
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, ''));
    for (const stage of STAGES) {
      const created = steps.findIndex(
        (line) => line.startsWith(`npm run keys -- create --stage ${stage}`) && line.includes('"smoke tests"'),
      );
      const smoked = steps.findIndex((line, at) => at > created && line.startsWith('npm run smoke -- --base'));
      const revoked = steps.findIndex(
        (line, at) => at > smoked && line === `npm run keys -- revoke <smoke key id> --stage ${stage}`,
      );
      expect(created, stage).toBeGreaterThanOrEqual(0);
      expect(smoked, stage).toBeGreaterThan(created);
      expect(revoked, stage).toBeGreaterThan(smoked);
    }
  });

  it("says how to remove PetStore-account's retained role and account setting for good", () => {
    const account = Template.fromStack(new PetStoreAccountStack(new App(), 'PetStore-account')).toJSON() as {
      Resources: Record<string, { Type: string; DeletionPolicy?: string; Properties: Record<string, unknown> }>;
    };
    const kept = Object.values(account.Resources).filter((resource) => resource.DeletionPolicy === 'Retain');
    expect(kept.map((resource) => resource.Type).sort()).toEqual(['AWS::ApiGateway::Account', 'AWS::IAM::Role']);
    const teardown = section('Tear down, and deploy again');
    const steps = [
      'aws cloudformation describe-stack-resources --stack-name PetStore-account',
      'npx cdk destroy PetStore-account',
      'aws apigateway update-account --patch-operations op=replace,path=/cloudwatchRoleArn',
      // Every managed policy of the role detached first: IAM refuses to delete a role that has one.
      ...kept
        .filter((resource) => resource.Type === 'AWS::IAM::Role')
        .flatMap((role) => role.Properties.ManagedPolicyArns as unknown[])
        .map((arn) => `--policy-arn arn:aws:iam::aws:${JSON.stringify(arn).match(/:iam::aws:(policy\/[^"]+)/)![1]}`),
      'aws iam delete-role --role-name "$role"',
    ];
    const at = steps.map((step) => teardown.indexOf(step));
    expect(
      at.every((found) => found >= 0),
      steps.filter((_, i) => at[i]! < 0).join('; '),
    ).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });
});
