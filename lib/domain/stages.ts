/** The deployment stages, and the names the stack gives each stage's resources that tools look up. */
export const STAGES = ['staging', 'production'] as const;
export type Stage = (typeof STAGES)[number];

export const isStage = (value: string): value is Stage => (STAGES as readonly string[]).includes(value);

/** The control table's physical name, fixed so that `npm run keys -- --stage <s>` finds it. */
export const controlTableName = (stage: Stage): string => `petstore-${stage}-control`;
