/**
 * The deployment stages. Each gets its own stack (`PetStore-<stage>`) with its own table,
 * secret, functions and API, so nothing staging does can touch production.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { STAGES, type Stage } from '../lib/stages.ts';

export { STAGES, type Stage };

export interface StageSettings {
  readonly stage: Stage;
  /**
   * Production keeps its data: table and secret are retained, the table has deletion protection
   * and the stack termination protection. Staging can be torn down completely.
   */
  readonly protectData: boolean;
  readonly logRetention: RetentionDays;
  /** API Gateway stage throttling (steady requests per second, and burst). */
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  readonly functionMemoryMiB: number;
  readonly functionTimeout: Duration;
  /** Browser origins allowed by CORS (e.g. `https://app.example.com`); none by default. */
  readonly corsAllowedOrigins: readonly string[];
}

export const STAGE_SETTINGS: Readonly<Record<Stage, StageSettings>> = {
  staging: {
    stage: 'staging',
    protectData: false,
    logRetention: RetentionDays.TWO_WEEKS,
    throttling: { rateLimit: 20, burstLimit: 40 },
    functionMemoryMiB: 512,
    functionTimeout: Duration.seconds(10),
    corsAllowedOrigins: [],
  },
  production: {
    stage: 'production',
    protectData: true,
    logRetention: RetentionDays.THREE_MONTHS,
    throttling: { rateLimit: 200, burstLimit: 400 },
    functionMemoryMiB: 512,
    functionTimeout: Duration.seconds(10),
    corsAllowedOrigins: [],
  },
};

export const stackName = (stage: Stage): string => `PetStore-${stage}`;

export const removalPolicyFor = (settings: StageSettings): RemovalPolicy =>
  settings.protectData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
