/** `keys rotate-cursor-secret`: the page-cursor secret replaced with an overlap (lib/store/cursorSecret.ts). */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Stage } from '../../lib/domain/stages.ts';
import { RotationUnderWay, rotateCursorSecret, type Rotation } from '../../lib/store/cursorSecret.ts';
import { KeysError, errorName } from './stage.ts';

export async function rotateCursor(
  client: DynamoDBDocumentClient,
  stage: Stage,
  table: string,
  now: Date,
  out: (line: string) => void,
): Promise<void> {
  let rotation: Rotation;
  try {
    rotation = await rotateCursorSecret({ documents: client, tableName: table }, now.getTime());
  } catch (error) {
    if (error instanceof RotationUnderWay) throw new KeysError(`rotate-cursor-secret: ${error.message}`);
    if (errorName(error) === 'ConditionalCheckFailedException')
      throw new KeysError('rotate-cursor-secret: another rotation changed the secret just now; nothing was rotated.');
    throw error;
  }
  const instant = (ms: number) => new Date(ms).toISOString();
  out(
    `Rotated the cursor secret for ${stage}: secret ${rotation.id} signs cursors from ${instant(rotation.activeFrom)}.`,
  );
  out(`Cursors signed by secret ${rotation.replaced.id} are accepted until ${instant(rotation.replaced.retiresAt)}.`);
}
