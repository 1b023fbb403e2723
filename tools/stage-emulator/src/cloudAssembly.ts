/**
 * Reads one stack of a synthesized cloud assembly (`cdk.out`): its template, the folder of each
 * resource's asset (a bundled function's code), and each function's entry from the metadata. Every failure is a one-line CloudAssemblyError a
 * CLI can print as it is.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string | string[];
  Metadata?: Record<string, unknown>;
  UpdatePolicy?: unknown;
  CreationPolicy?: unknown;
  Condition?: string;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Parameters?: Record<string, { Type: string; Default?: string; AllowedPattern?: string; [k: string]: unknown }>;
  Outputs?: Record<string, { Value: unknown; Description?: string }>;
  Conditions?: Record<string, unknown>;
}

/** A user-facing failure to read the assembly; the message is one line. */
export class CloudAssemblyError extends Error {
  override name = 'CloudAssemblyError';
}

export interface StackArtifact {
  stackName: string;
  outdir: string;
  templateFile: string;
  template: CfnTemplate;
  /** Absolute folder of a resource's asset (Metadata `aws:asset:path`), e.g. a bundled function. */
  assetDir(logicalId: string): string;
}

interface ManifestArtifact {
  type: string;
  displayName?: string;
  properties?: { templateFile?: string };
}

interface Manifest {
  artifacts?: Record<string, ManifestArtifact>;
}

const STACK_ARTIFACT = 'aws:cloudformation:stack';
const ASSET_PATH = 'aws:asset:path';
/** The file a bundled Node.js function's asset must hold for `Handler: index.handler`. */
const BUNDLE_ENTRY = /^index\.(mjs|cjs|js)$/;

export function readStack(outdir: string, stackName: string, template?: CfnTemplate): StackArtifact {
  const root = resolve(outdir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new CloudAssemblyError(
      `No cloud assembly at ${root}: run \`npx cdk synth\` first (or pass its --output folder).`,
    );
  }
  const manifest = readJson<Manifest>(
    join(root, 'manifest.json'),
    `No manifest.json in ${root}: is it a cloud assembly (cdk.out)?`,
  );
  return manifestStack(root, manifest, stackName, template);
}

/** The stack of the assembly at `root` (a folder) named by its artifact id or display name. */
function manifestStack(root: string, manifest: Manifest, stackName: string, template?: CfnTemplate): StackArtifact {
  const stacks = stackArtifacts(manifest);
  const found = stacks.find(([id, artifact]) => id === stackName || artifact.displayName === stackName);
  if (!found) {
    const names = stacks.map(([id]) => id).join(', ') || 'none';
    throw new CloudAssemblyError(`No stack ${stackName} in ${root} (stacks there: ${names}).`);
  }
  const [artifactId, artifact] = found;
  const templateFile = artifact.properties?.templateFile;
  if (!templateFile) throw new CloudAssemblyError(`Stack ${artifactId} in ${root} names no template file.`);
  const templatePath = join(root, templateFile);
  const stackTemplate =
    template ?? readJson<CfnTemplate>(templatePath, `The template of ${artifactId} is missing: ${templatePath}.`);

  const assetDir = (logicalId: string): string => {
    const resource = stackTemplate.Resources[logicalId];
    if (!resource) throw new CloudAssemblyError(`No resource ${logicalId} in stack ${artifactId}.`);
    const assetPath = resource.Metadata?.[ASSET_PATH];
    if (typeof assetPath !== 'string') {
      throw new CloudAssemblyError(
        `Resource ${logicalId} of ${artifactId} has no asset (no "${ASSET_PATH}" metadata).`,
      );
    }
    const dir = isAbsolute(assetPath) ? assetPath : join(root, assetPath);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new CloudAssemblyError(`The asset folder of ${logicalId} is missing: ${dir}. Run \`npx cdk synth\` again.`);
    }
    if (!readdirSync(dir).some((file) => BUNDLE_ENTRY.test(file))) {
      throw new CloudAssemblyError(
        `The asset of ${logicalId} is not bundled (no index.js or index.mjs in ${dir}): synthesize with bundling (\`npx cdk synth\`).`,
      );
    }
    return dir;
  };

  return { stackName: artifactId, outdir: root, templateFile: templatePath, template: stackTemplate, assetDir };
}

/**
 * Whether every function of every stack in `outdir` has its bundle: `cdk ls` (and `cdk synth` with
 * bundling skipped) writes a fresh manifest and templates but no function's asset.
 */
export function hasEveryBundle(outdir: string): boolean {
  try {
    const root = resolve(outdir);
    const manifest = readJson<Manifest>(join(root, 'manifest.json'), 'no manifest');
    for (const [stackName] of stackArtifacts(manifest)) {
      const stack = manifestStack(root, manifest, stackName);
      for (const [logicalId, resource] of Object.entries(stack.template.Resources)) {
        if (resource.Type === 'AWS::Lambda::Function' && typeof resource.Metadata?.[ASSET_PATH] === 'string')
          stack.assetDir(logicalId);
      }
    }
    return true;
  } catch (error) {
    if (error instanceof CloudAssemblyError) return false;
    throw error;
  }
}

function stackArtifacts(manifest: Manifest): [string, ManifestArtifact][] {
  return Object.entries(manifest.artifacts ?? {}).filter(([, artifact]) => artifact.type === STACK_ARTIFACT);
}

function readJson<T>(path: string, missing: string): T {
  if (!existsSync(path)) throw new CloudAssemblyError(missing);
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (error) {
    throw new CloudAssemblyError(`${path} is not valid JSON: ${(error as Error).message.split('\n')[0]}`);
  }
}

/**
 * Each function's entry (by logical id), as its construct records it in the assembly's metadata,
 * under the type `entryMetadata` names.
 */
export function functionEntries(stack: StackArtifact, entryMetadata: string): Map<string, string> {
  const manifest = JSON.parse(readFileSync(join(stack.outdir, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { metadata?: Metadata; additionalMetadataFile?: string }>;
  };
  const artifact = manifest.artifacts[stack.stackName];
  const metadata: Metadata = {
    ...artifact?.metadata,
    ...(artifact?.additionalMetadataFile
      ? (JSON.parse(readFileSync(join(stack.outdir, artifact.additionalMetadataFile), 'utf8')) as Metadata)
      : {}),
  };
  const entries = new Map<string, string>();
  for (const [logicalId, resource] of Object.entries(stack.template.Resources)) {
    const path = resource.Metadata?.['aws:cdk:path'];
    if (resource.Type !== 'AWS::Lambda::Function' || typeof path !== 'string') continue;
    const entry = metadata[`/${dirname(path)}`]?.find((item) => item.type === entryMetadata)?.data;
    if (typeof entry === 'string') entries.set(logicalId, entry);
  }
  return entries;
}

type Metadata = Record<string, { type: string; data?: unknown }[]>;

/** The file a function's `Handler` (`index.handler`) is loaded from in its task root, as a bundle writes it (`index.js`). */
export const handlerFile = (handler: string): string => `${handler.slice(0, handler.lastIndexOf('.'))}.js`;
