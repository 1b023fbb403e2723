/**
 * A fixture of test/infra/lambdaDynamoClient.test.ts, run in a child process as a Lambda bundle and
 * as source: sends one GetItem per error name in ERROR_NAMES to the stand-in at STAND_IN (which
 * answers each with that error) and prints, as one JSON line, what the client threw for each.
 */
import { DynamoDBClient, DynamoDBServiceException, GetItemCommand } from '@aws-sdk/client-dynamodb';

const client = new DynamoDBClient({
  region: 'us-east-1',
  endpoint: process.env.STAND_IN,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  maxAttempts: 1,
});
const thrown: Record<string, unknown> = {};
for (const name of (process.env.ERROR_NAMES ?? '').split(',')) {
  try {
    await client.send(new GetItemCommand({ TableName: name, Key: { id: { N: '1' } } }));
    thrown[name] = 'nothing';
  } catch (error) {
    const { message, $fault, $metadata } = error as DynamoDBServiceException;
    thrown[name] = {
      name: (error as Error).name,
      message,
      fault: $fault,
      status: $metadata?.httpStatusCode,
      serviceException: error instanceof DynamoDBServiceException,
      // A class of its own (a subclass), not the package's base exception (class names are minified in a bundle).
      ownClass: Object.getPrototypeOf(error) !== DynamoDBServiceException.prototype,
    };
  }
}
process.stdout.write(`${JSON.stringify(thrown)}\n`);
