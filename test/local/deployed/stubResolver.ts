/**
 * Test support: a minimal stand-in for part A's TemplateResolver (local/deployed/intrinsics.ts),
 * enough for the REST API emulator's tests: Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select and the
 * pseudo parameters, with physical ids derived from logical ids. The real resolver replaces it once
 * merged; nothing outside test/local/deployed should import this file.
 */
import { createHash } from 'node:crypto';

interface Template {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
}

export const OFFLINE = { region: 'us-east-1', accountId: '123456789012', partition: 'aws' } as const;

export class StubResolver {
  constructor(
    private readonly template: Template,
    private readonly stackName = 'PetStore-staging',
  ) {}

  resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((item) => this.resolve(item));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    const [key, argument] = entries[0] ?? [];
    if (entries.length === 1 && key === 'Ref') return this.ref(String(argument));
    if (entries.length === 1 && key === 'Fn::GetAtt') {
      const [logicalId, attribute] = (typeof argument === 'string' ? argument.split('.') : argument) as [string, string];
      return this.getAtt(logicalId, attribute);
    }
    if (entries.length === 1 && key === 'Fn::Join') {
      const [separator, parts] = argument as [string, unknown[]];
      return (this.resolve(parts) as unknown[]).join(separator);
    }
    if (entries.length === 1 && key === 'Fn::Select') {
      const [index, list] = argument as [number, unknown];
      return (this.resolve(list) as unknown[])[Number(index)];
    }
    if (entries.length === 1 && key === 'Fn::Sub') return this.#sub(argument);
    return Object.fromEntries(entries.map(([name, item]) => [name, this.resolve(item)]));
  }

  ref(logicalId: string): string {
    const pseudo: Record<string, string> = {
      'AWS::AccountId': OFFLINE.accountId,
      'AWS::Region': OFFLINE.region,
      'AWS::Partition': OFFLINE.partition,
      'AWS::StackName': this.stackName,
      'AWS::URLSuffix': 'amazonaws.com',
    };
    if (pseudo[logicalId]) return pseudo[logicalId];
    const resource = this.template.Resources[logicalId];
    if (!resource) throw new Error(`Ref to unknown ${logicalId}`);
    const properties = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::ApiGateway::RestApi':
        return physicalId(logicalId, 10);
      case 'AWS::ApiGateway::Resource':
        return physicalId(logicalId, 6);
      case 'AWS::ApiGateway::Stage':
        return String(this.resolve(properties.StageName));
      case 'AWS::Lambda::Function':
        return properties.FunctionName ? String(this.resolve(properties.FunctionName)) : `${this.stackName}-${logicalId}`.slice(0, 64);
      case 'AWS::Lambda::Alias':
        return `${this.#functionArn(String(this.resolve(properties.FunctionName)))}:${String(properties.Name)}`;
      default:
        return `${this.stackName}-${logicalId}`;
    }
  }

  getAtt(logicalId: string, attribute: string): string {
    const resource = this.template.Resources[logicalId];
    if (!resource) throw new Error(`GetAtt of unknown ${logicalId}`);
    if (attribute === 'RootResourceId') return physicalId(`${logicalId}/root`, 10);
    if (resource.Type === 'AWS::Lambda::Function' && attribute === 'Arn') return this.#functionArn(this.ref(logicalId));
    return `arn:${OFFLINE.partition}:stub:${OFFLINE.region}:${OFFLINE.accountId}:${logicalId}/${attribute}`;
  }

  #functionArn(name: string): string {
    return `arn:${OFFLINE.partition}:lambda:${OFFLINE.region}:${OFFLINE.accountId}:function:${name}`;
  }

  #sub(argument: unknown): string {
    const [text, variables = {}] = (typeof argument === 'string' ? [argument] : argument) as [string, Record<string, unknown>?];
    return text.replace(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
      if (name in variables) return String(this.resolve(variables[name]));
      const [logicalId, attribute] = name.split('.') as [string, string?];
      return attribute && !logicalId.startsWith('AWS::') ? this.getAtt(logicalId, attribute) : this.ref(name);
    });
  }
}

function physicalId(seed: string, length: number): string {
  return BigInt(`0x${createHash('sha256').update(seed).digest('hex')}`).toString(36).slice(0, length);
}
