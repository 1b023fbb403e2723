/**
 * Where a role's grants are written in the app's own code (its `infraSource`, e.g. infra/), found
 * from the template rather than kept in a list: the role's `aws:cdk:path` metadata names the
 * construct that made it (`PetStore-staging/Functions/CreatePetRole` -> the construct created with
 * id `Functions`, whose class is exported by infra/constructs/functions.ts), and each statement's
 * Sid names the line that writes it (`sid: 'CursorSecret'`). Anything not found is left out: the
 * cdk path alone still says where.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { CfnTemplate } from './cloudAssembly.ts';
import type { StageApp } from './stageApp.ts';

export interface RoleSource {
  /** The role's construct path, e.g. `PetStore-staging/Functions/CreatePetRole`. */
  constructPath?: string;
  /** The file whose construct creates the role, e.g. `infra/constructs/functions.ts`. */
  constructFile?: string;
  /** `file:line` of each statement, by Sid. */
  statements: Record<string, string>;
}

export interface SourceFile {
  path: string;
  lines: string[];
}

/** `files` are the app's `infraSource` files, read once by `infraSources` for every role. */
export function roleSource(
  template: CfnTemplate,
  roleLogicalId: string,
  sids: readonly string[],
  files: readonly SourceFile[],
): RoleSource {
  const cdkPath = (template.Resources[roleLogicalId]?.Metadata?.['aws:cdk:path'] as string | undefined)?.replace(
    /\/Resource$/,
    '',
  );
  const statements: Record<string, string> = {};
  for (const sid of sids) {
    const found = findLine(files, (line) => line.includes(`sid: '${sid}'`));
    if (found) statements[sid] = found;
  }
  const constructFile = cdkPath ? constructFileOf(files, cdkPath.split('/').slice(1)) : undefined;
  return { ...(cdkPath ? { constructPath: cdkPath } : {}), ...(constructFile ? { constructFile } : {}), statements };
}

/** `infra/constructs/functions.ts (PetStore-staging/Functions/CreatePetRole)`, or just what is known. */
export function describeRoleSource(source: RoleSource): string {
  if (source.constructFile) return `${source.constructFile} (${source.constructPath})`;
  return source.constructPath ?? 'an unknown construct (the template has no aws:cdk:path metadata)';
}

/** The file exporting the class of the deepest construct on the path created with a literal id. */
function constructFileOf(files: readonly SourceFile[], ids: string[]): string | undefined {
  for (const id of [...ids].reverse()) {
    const creation = new RegExp(`new (\\w+)\\(\\w+, '${id.replace(/[^A-Za-z0-9]/g, '')}'`);
    const className = files
      .flatMap((file) => file.lines)
      .map((line) => creation.exec(line)?.[1])
      .find(Boolean);
    if (!className) continue;
    const file = files.find((candidate) =>
      candidate.lines.some((line) => line.startsWith(`export class ${className} `)),
    );
    if (file) return file.path;
  }
  return undefined;
}

function findLine(files: readonly SourceFile[], test: (line: string) => boolean): string | undefined {
  for (const file of files) {
    const index = file.lines.findIndex(test);
    if (index >= 0) return `${file.path}:${index + 1}`;
  }
  return undefined;
}

/** Every .ts file of the app's `infraSource` folder, split into lines; none without an app. */
export function infraSources(app: Pick<StageApp, 'root' | 'infraSource'> | undefined): SourceFile[] {
  if (!app) return [];
  const { root } = app;
  const dir = join(root, app.infraSource);
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return []; // run from a cdk.out without its sources: the cdk path alone says where
  }
  return names
    .filter((name) => name.endsWith('.ts'))
    .sort()
    .map((name) => ({
      path: relative(root, join(dir, name)),
      lines: readFileSync(join(dir, name), 'utf8').split('\n'),
    }));
}
