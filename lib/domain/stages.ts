/** The deployment stages. */
export const STAGES = ['staging', 'production'] as const;
export type Stage = (typeof STAGES)[number];

export const isStage = (value: string): value is Stage => (STAGES as readonly string[]).includes(value);
