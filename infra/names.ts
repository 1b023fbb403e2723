/** Construct ids from our names: `createPet` -> `CreatePet`, `BAD_REQUEST_BODY` (lowered) -> `BadRequestBody`. */
export const pascal = (name: string): string =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
