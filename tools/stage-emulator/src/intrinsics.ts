/**
 * Resolves a CloudFormation template's intrinsic functions the way CloudFormation would on deploy,
 * offline: physical names, ARNs and ids are those CloudFormation would give, made deterministic
 * (the same template always resolves to the same strings) so that tests and logs can name them.
 */
import { createHash } from 'node:crypto';
import { CloudAssemblyError, type CfnResource, type CfnTemplate } from './cloudAssembly.ts';

export interface DeployedEnvironment {
  region: string;
  accountId: string;
  partition: string;
}

/** The fixed identity everything offline runs as. */
export const OFFLINE_ENVIRONMENT: DeployedEnvironment = Object.freeze({
  region: 'us-east-1',
  accountId: '123456789012',
  partition: 'aws',
});

/** A template that cannot be resolved (unknown reference, attribute or parameter); one line. */
export class TemplateResolutionError extends CloudAssemblyError {
  override name = 'TemplateResolutionError';
}

/** What `AWS::NoValue` resolves to: removed from the object or list that holds it. */
const NO_VALUE = Symbol('AWS::NoValue');

/** The property that names a resource, per type: when set, it is the physical name. */
const NAME_PROPERTY: Record<string, string> = {
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::S3::Bucket': 'BucketName',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::CloudWatch::CompositeAlarm': 'AlarmName',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
  'AWS::CodeDeploy::Application': 'ApplicationName',
  'AWS::CodeDeploy::DeploymentGroup': 'DeploymentGroupName',
  'AWS::WAFv2::WebACL': 'Name',
  'AWS::ApiGateway::RestApi': 'Name',
  'AWS::Events::Rule': 'Name',
  'AWS::StepFunctions::StateMachine': 'StateMachineName',
  'AWS::Backup::BackupVault': 'BackupVaultName',
};

type Attributes = Record<string, () => string>;
interface TypeSemantics {
  ref(): string;
  attributes: Attributes;
}

export class TemplateResolver {
  private readonly stackName: string;
  private readonly template: CfnTemplate;
  private readonly env: DeployedEnvironment;
  private readonly parameters: Record<string, string>;
  private readonly conditions = new Map<string, boolean>();
  private readonly resolving = new Set<string>();

  constructor(
    stack: { stackName: string; template: CfnTemplate },
    env: DeployedEnvironment = OFFLINE_ENVIRONMENT,
    parameters: Record<string, string> = {},
  ) {
    this.stackName = stack.stackName;
    this.template = stack.template;
    this.env = env;
    this.parameters = parameters;
  }

  /** Deeply resolves Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split, Fn::If/Conditions, pseudo parameters. */
  resolve(value: unknown): unknown {
    const resolved = this.resolveValue(value);
    return resolved === NO_VALUE ? undefined : resolved;
  }

  resolveString(value: unknown): string {
    const resolved = this.resolve(value);
    if (typeof resolved === 'string') return resolved;
    if (typeof resolved === 'number' || typeof resolved === 'boolean') return String(resolved);
    throw new TemplateResolutionError(
      `Expected a string, got ${JSON.stringify(resolved)} from ${JSON.stringify(value)}.`,
    );
  }

  /** What `Ref` returns for a resource (table name, function name, alias ARN, role name, API id, stage name...). */
  ref(logicalId: string): string {
    return this.guarded(`Ref ${logicalId}`, () => this.semantics(logicalId).ref());
  }

  getAtt(logicalId: string, attribute: string): string {
    return this.guarded(`GetAtt ${logicalId}.${attribute}`, () => {
      const semantics = this.semantics(logicalId);
      const get = semantics.attributes[attribute];
      if (!get) {
        const known = Object.keys(semantics.attributes).join(', ') || 'none';
        throw new TemplateResolutionError(
          `Fn::GetAtt ${logicalId}.${attribute}: attribute ${attribute} of ${this.resource(logicalId).Type} is not known offline (known: ${known}).`,
        );
      }
      return get();
    });
  }

  /** Whether a template condition holds. */
  condition(name: string): boolean {
    const cached = this.conditions.get(name);
    if (cached !== undefined) return cached;
    const definition = this.template.Conditions?.[name];
    if (definition === undefined) throw new TemplateResolutionError(`No condition ${name} in the template.`);
    const holds = this.guarded(`Condition ${name}`, () => this.evaluateCondition(definition));
    this.conditions.set(name, holds);
    return holds;
  }

  private resolveValue(value: unknown): unknown {
    if (Array.isArray(value)) {
      return value.map((item) => this.resolveValue(item)).filter((item) => item !== NO_VALUE);
    }
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value);
    if (entries.length === 1) {
      const [key, argument] = entries[0]!;
      if (key === 'Ref') return this.resolveRef(this.resolveName(argument, 'Ref'));
      if (key.startsWith('Fn::')) return this.intrinsic(key, argument);
    }
    const result: Record<string, unknown> = {};
    for (const [key, item] of entries) {
      const resolved = this.resolveValue(item);
      if (resolved !== NO_VALUE) result[key] = resolved;
    }
    return result;
  }

  private intrinsic(name: string, argument: unknown): unknown {
    switch (name) {
      case 'Fn::GetAtt': {
        const [logicalId, attribute] = this.getAttArguments(argument);
        return this.getAtt(logicalId, attribute);
      }
      case 'Fn::Join': {
        const [delimiter, list] = this.arguments(name, argument, 2);
        const items = this.resolveValue(list);
        if (!Array.isArray(items)) throw this.malformed(name, argument);
        return items.map((item) => this.scalar(name, item)).join(this.scalar(name, this.resolveValue(delimiter)));
      }
      case 'Fn::Sub':
        return this.substitute(argument);
      case 'Fn::Select': {
        const [index, list] = this.arguments(name, argument, 2);
        const items = this.resolveValue(list);
        const position = Number(this.resolveValue(index));
        if (!Array.isArray(items) || !Number.isInteger(position) || position < 0 || position >= items.length) {
          throw new TemplateResolutionError(`Fn::Select: index ${String(index)} is out of ${JSON.stringify(items)}.`);
        }
        return items[position];
      }
      case 'Fn::Split': {
        const [delimiter, source] = this.arguments(name, argument, 2);
        return this.scalar(name, this.resolveValue(source)).split(this.scalar(name, this.resolveValue(delimiter)));
      }
      case 'Fn::If': {
        const [conditionName, whenTrue, whenFalse] = this.arguments(name, argument, 3);
        return this.resolveValue(this.condition(this.resolveName(conditionName, name)) ? whenTrue : whenFalse);
      }
      case 'Fn::Equals':
      case 'Fn::Not':
      case 'Fn::And':
      case 'Fn::Or':
        return this.evaluateCondition({ [name]: argument });
      case 'Fn::Base64':
        return Buffer.from(this.scalar(name, this.resolveValue(argument))).toString('base64');
      case 'Fn::GetAZs':
        return ['a', 'b', 'c'].map((zone) => `${this.env.region}${zone}`);
      case 'Fn::FindInMap': {
        const [map, topKey, secondKey] = this.arguments(name, argument, 3).map((part) =>
          this.scalar(name, this.resolveValue(part)),
        );
        const mappings = (this.template as { Mappings?: Record<string, Record<string, Record<string, unknown>>> })
          .Mappings;
        const found = mappings?.[map!]?.[topKey!]?.[secondKey!];
        if (found === undefined)
          throw new TemplateResolutionError(`Fn::FindInMap: no ${map}.${topKey}.${secondKey} in Mappings.`);
        return found;
      }
      default:
        throw new TemplateResolutionError(
          `${name} is not supported offline (in ${JSON.stringify({ [name]: argument })}).`,
        );
    }
  }

  private evaluateCondition(expression: unknown): boolean {
    if (expression === true || expression === 'true') return true;
    if (expression === false || expression === 'false') return false;
    if (expression === null || typeof expression !== 'object' || Array.isArray(expression)) {
      throw new TemplateResolutionError(`Not a condition: ${JSON.stringify(expression)}.`);
    }
    const entries = Object.entries(expression);
    const [name, argument] = entries[0] ?? [];
    if (entries.length !== 1 || name === undefined)
      throw new TemplateResolutionError(`Not a condition: ${JSON.stringify(expression)}.`);
    switch (name) {
      case 'Condition':
        return this.condition(this.resolveName(argument, name));
      case 'Fn::Equals': {
        const [left, right] = this.arguments(name, argument, 2).map((side) => this.resolveValue(side));
        return JSON.stringify(left) === JSON.stringify(right);
      }
      case 'Fn::Not':
        return !this.evaluateCondition(this.arguments(name, argument, 1)[0]);
      case 'Fn::And':
        return this.conditionList(name, argument).every((item) => this.evaluateCondition(item));
      case 'Fn::Or':
        return this.conditionList(name, argument).some((item) => this.evaluateCondition(item));
      default: {
        const value = this.resolveValue(expression);
        if (value === true || value === 'true') return true;
        if (value === false || value === 'false') return false;
        throw new TemplateResolutionError(`Not a condition: ${JSON.stringify(expression)}.`);
      }
    }
  }

  private conditionList(name: string, argument: unknown): unknown[] {
    if (!Array.isArray(argument) || argument.length < 1) throw this.malformed(name, argument);
    return argument;
  }

  /** `Fn::Sub`: "${Name}", "${Logical.Attr}", "${!Literal}", with optional variables. */
  private substitute(argument: unknown): string {
    const [template, variables] =
      typeof argument === 'string' ? [argument, {}] : this.arguments('Fn::Sub', argument, 2);
    if (typeof template !== 'string' || variables === null || typeof variables !== 'object') {
      throw this.malformed('Fn::Sub', argument);
    }
    const values = variables as Record<string, unknown>;
    return template.replace(/\$\{([^}]*)\}/g, (_match, name: string) => {
      if (name.startsWith('!')) return `\${${name.slice(1)}}`;
      if (name in values) return this.scalar('Fn::Sub', this.resolveValue(values[name]));
      const dot = name.indexOf('.');
      if (dot > 0 && !name.startsWith('AWS::')) return this.getAtt(name.slice(0, dot), name.slice(dot + 1));
      return this.scalar('Fn::Sub', this.resolveRef(name));
    });
  }

  private resolveRef(name: string): unknown {
    switch (name) {
      case 'AWS::Region':
        return this.env.region;
      case 'AWS::AccountId':
        return this.env.accountId;
      case 'AWS::Partition':
        return this.env.partition;
      case 'AWS::StackName':
        return this.stackName;
      case 'AWS::StackId':
        return `arn:${this.env.partition}:cloudformation:${this.env.region}:${this.env.accountId}:stack/${this.stackName}/${deterministicUuid(this.stackName)}`;
      case 'AWS::URLSuffix':
        return 'amazonaws.com';
      case 'AWS::NotificationARNs':
        return [];
      case 'AWS::NoValue':
        return NO_VALUE;
    }
    const parameter = this.template.Parameters?.[name];
    if (parameter) {
      const value = this.parameters[name] ?? parameter.Default;
      if (value === undefined) {
        throw new TemplateResolutionError(`Template parameter ${name} has no value and no Default: give it a value.`);
      }
      return parameter.Type === 'CommaDelimitedList' || parameter.Type.startsWith('List<') ? value.split(',') : value;
    }
    return this.ref(name);
  }

  private semantics(logicalId: string): TypeSemantics {
    const resource = this.resource(logicalId);
    const name = () => this.physicalName(logicalId);
    const { partition, region, accountId } = this.env;
    const arn = (service: string, rest: string, inRegion = region) =>
      `arn:${partition}:${service}:${inRegion}:${accountId}:${rest}`;
    const props = resource.Properties ?? {};
    const named = (attributes: Attributes = {}): TypeSemantics => ({ ref: name, attributes });

    switch (resource.Type) {
      case 'AWS::DynamoDB::Table': {
        const tableArn = () => arn('dynamodb', `table/${name()}`);
        return named({
          Arn: tableArn,
          StreamArn: () => {
            if (!props.StreamSpecification)
              throw new TemplateResolutionError(`Table ${logicalId} has no stream (no StreamSpecification).`);
            return `${tableArn()}/stream/1970-01-01T00:00:00.000`;
          },
        });
      }
      case 'AWS::Lambda::Function':
        return named({ Arn: () => arn('lambda', `function:${name()}`) });
      case 'AWS::Lambda::Version': {
        const versionArn = () =>
          arn('lambda', `function:${this.functionNameOf(props.FunctionName)}:${this.versionNumber(logicalId)}`);
        return {
          ref: versionArn,
          attributes: { Version: () => this.versionNumber(logicalId), FunctionArn: versionArn },
        };
      }
      case 'AWS::Lambda::Alias': {
        const aliasArn = () =>
          arn('lambda', `function:${this.functionNameOf(props.FunctionName)}:${this.resolveString(props.Name)}`);
        return { ref: aliasArn, attributes: { AliasArn: aliasArn } };
      }
      case 'AWS::IAM::Role': {
        const path = () => (props.Path === undefined ? '/' : this.resolveString(props.Path));
        return named({
          Arn: () => `arn:${partition}:iam::${accountId}:role${path()}${name()}`,
          RoleId: () => `AROA${deterministicId(`${this.stackName}/${logicalId}`, 17).toUpperCase()}`,
        });
      }
      case 'AWS::IAM::Policy':
        return named({ Id: name });
      case 'AWS::IAM::ManagedPolicy': {
        const policyArn = () => `arn:${partition}:iam::${accountId}:policy/${name()}`;
        return { ref: policyArn, attributes: { PolicyArn: policyArn } };
      }
      case 'AWS::Logs::LogGroup':
        return named({ Arn: () => arn('logs', `log-group:${name()}:*`) });
      case 'AWS::SNS::Topic': {
        const topicArn = () => arn('sns', name());
        return { ref: topicArn, attributes: { TopicArn: topicArn, TopicName: name } };
      }
      case 'AWS::SQS::Queue':
        return {
          ref: () => `https://sqs.${region}.amazonaws.com/${accountId}/${name()}`,
          attributes: {
            Arn: () => arn('sqs', name()),
            QueueName: name,
            QueueUrl: () => `https://sqs.${region}.amazonaws.com/${accountId}/${name()}`,
          },
        };
      case 'AWS::S3::Bucket':
        return named({ Arn: () => `arn:${partition}:s3:::${name()}`, DomainName: () => `${name()}.s3.amazonaws.com` });
      case 'AWS::CloudWatch::Alarm':
      case 'AWS::CloudWatch::CompositeAlarm':
        return named({ Arn: () => arn('cloudwatch', `alarm:${name()}`) });
      case 'AWS::WAFv2::WebACL': {
        const id = () => deterministicUuid(`${this.stackName}/${logicalId}`);
        const scope = () => (this.resolve(props.Scope) === 'CLOUDFRONT' ? 'global' : 'regional');
        const webAclArn = () =>
          arn('wafv2', `${scope()}/webacl/${name()}/${id()}`, scope() === 'global' ? 'us-east-1' : region);
        return {
          ref: () => `${name()}|${id()}|${String(this.resolve(props.Scope))}`,
          attributes: { Arn: webAclArn, Id: id },
        };
      }
      case 'AWS::Backup::BackupVault': {
        const vaultArn = () => arn('backup', `backup-vault:${name()}`);
        return named({ BackupVaultName: name, BackupVaultArn: vaultArn });
      }
      case 'AWS::Backup::BackupPlan': {
        const id = () => deterministicUuid(`${this.stackName}/${logicalId}`);
        const planArn = () => arn('backup', `backup-plan:${id()}`);
        return { ref: id, attributes: { BackupPlanId: id, BackupPlanArn: planArn, VersionId: id } };
      }
      default:
        // API Gateway's types; then CloudWatch::Dashboard, CodeDeploy::*, and any type without its own semantics: the physical name.
        return this.apiGatewaySemantics(logicalId, resource) ?? named();
    }
  }

  /** API Gateway's resources, whose ids API Gateway makes up (undefined for any other type). */
  private apiGatewaySemantics(logicalId: string, resource: CfnResource): TypeSemantics | undefined {
    const props = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::ApiGateway::RestApi': {
        const id = () => deterministicId(`${this.stackName}/${logicalId}`, 10);
        return {
          ref: id,
          attributes: { RestApiId: id, RootResourceId: () => deterministicId(`${this.stackName}/${logicalId}/`, 10) },
        };
      }
      case 'AWS::ApiGateway::Resource': {
        const id = () => deterministicId(`${this.stackName}/${logicalId}`, 6);
        return { ref: id, attributes: { ResourceId: id } };
      }
      case 'AWS::ApiGateway::Deployment': {
        const id = () => deterministicId(`${this.stackName}/${logicalId}`, 6);
        return { ref: id, attributes: { DeploymentId: id } };
      }
      case 'AWS::ApiGateway::Authorizer':
      case 'AWS::ApiGateway::UsagePlan': {
        const id = () => deterministicId(`${this.stackName}/${logicalId}`, 6);
        return { ref: id, attributes: { AuthorizerId: id, Id: id } };
      }
      case 'AWS::ApiGateway::Stage':
        return { ref: () => this.resolveString(props.StageName), attributes: {} };
      default:
        return undefined;
    }
  }

  /** The name a resource gets: its name property when set, else `<stackName>-<logicalId>`. */
  private physicalName(logicalId: string): string {
    const resource = this.resource(logicalId);
    const property = NAME_PROPERTY[resource.Type];
    const given = property ? resource.Properties?.[property] : undefined;
    return given === undefined ? `${this.stackName}-${logicalId}` : this.resolveString(given);
  }

  /** A function's name from a `FunctionName` property, which may hold a name or an ARN. */
  private functionNameOf(value: unknown): string {
    const resolved = this.resolveString(value);
    return resolved.startsWith('arn:') ? (resolved.split(':')[6] ?? resolved) : resolved;
  }

  /** Versions of one function are published 1, 2, ... in template order. */
  private versionNumber(logicalId: string): string {
    const functionName = this.functionNameOf(this.resource(logicalId).Properties?.FunctionName);
    const versions = Object.entries(this.template.Resources)
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::Version')
      .filter(([, resource]) => this.functionNameOf(resource.Properties?.FunctionName) === functionName)
      .map(([id]) => id);
    return String(versions.indexOf(logicalId) + 1);
  }

  private resource(logicalId: string): CfnResource {
    const resource = this.template.Resources[logicalId];
    if (!resource)
      throw new TemplateResolutionError(`No resource or parameter ${logicalId} in stack ${this.stackName}.`);
    return resource;
  }

  /** Runs a resolution step, refusing a reference cycle instead of overflowing the stack. */
  private guarded<T>(step: string, run: () => T): T {
    if (this.resolving.has(step)) throw new TemplateResolutionError(`Circular reference in the template at ${step}.`);
    this.resolving.add(step);
    try {
      return run();
    } finally {
      this.resolving.delete(step);
    }
  }

  private getAttArguments(argument: unknown): [string, string] {
    if (typeof argument === 'string') {
      const dot = argument.indexOf('.');
      if (dot > 0) return [argument.slice(0, dot), argument.slice(dot + 1)];
    } else if (Array.isArray(argument) && argument.length === 2) {
      return [this.resolveName(argument[0], 'Fn::GetAtt'), this.scalar('Fn::GetAtt', this.resolveValue(argument[1]))];
    }
    throw this.malformed('Fn::GetAtt', argument);
  }

  private arguments(name: string, argument: unknown, count: number): unknown[] {
    if (!Array.isArray(argument) || argument.length !== count) throw this.malformed(name, argument);
    return argument;
  }

  private resolveName(argument: unknown, name: string): string {
    if (typeof argument !== 'string') throw this.malformed(name, argument);
    return argument;
  }

  private scalar(name: string, value: unknown): string {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    throw new TemplateResolutionError(
      `${name}: expected a string, got ${JSON.stringify(value === NO_VALUE ? 'AWS::NoValue' : value)}.`,
    );
  }

  private malformed(name: string, argument: unknown): TemplateResolutionError {
    return new TemplateResolutionError(`Malformed ${name}: ${JSON.stringify(argument)}.`);
  }
}

/** `length` lowercase alphanumerics derived from `seed` (API Gateway style ids). */
function deterministicId(seed: string, length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const digest = createHash('sha256').update(seed).digest();
  return Array.from(digest.subarray(0, length), (byte) => alphabet[byte % alphabet.length]).join('');
}

function deterministicUuid(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
