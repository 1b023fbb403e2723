/**
 * A `.js` handler's module format, as Lambda's Node.js runtime decides it: CommonJS unless a
 * package.json in the function's own package says "type": "module". The bundles are CommonJS
 * `index.js` files in cdk.out, under the project's package.json ("type": "module"), which a
 * deployed function never has: the sandbox must not take its format from there.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LambdaFunctionHost } from '../src/lambdaHost.ts';
import { fixtureFunction } from '../../../test/support/lambdaFixture.ts';

let project: string;
const hosts: LambdaFunctionHost[] = [];

beforeAll(() => {
  // A project that declares itself an ES module package, with two function packages inside it.
  project = mkdtempSync(join(tmpdir(), 'handler-format-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
  mkdirSync(join(project, 'commonjs'));
  writeFileSync(
    join(project, 'commonjs', 'index.js'),
    `exports.handler = async () => ({ format: typeof module === 'object' ? 'commonjs' : '?' });`,
  );
  mkdirSync(join(project, 'module'));
  writeFileSync(join(project, 'module', 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(
    join(project, 'module', 'index.js'),
    `export const handler = async () => ({ format: typeof module === 'undefined' ? 'module' : '?' });`,
  );
});
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

const invoke = (folder: string) => {
  const host = new LambdaFunctionHost(fixtureFunction(folder, join(project, folder)));
  hosts.push(host);
  return host.invoke({});
};

describe("a .js handler's format", () => {
  it('is CommonJS when the function holds no package.json, whatever a folder above it declares', async () => {
    expect(await invoke('commonjs')).toEqual({ kind: 'ok', payload: { format: 'commonjs' } });
  });

  it('is an ES module when the function\'s own package.json says "type": "module"', async () => {
    expect(await invoke('module')).toEqual({ kind: 'ok', payload: { format: 'module' } });
  });
});
