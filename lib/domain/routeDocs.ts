/**
 * What the documentation says of each route: prose for the OpenAPI document (contract/), the API
 * Gateway method documentation and the function descriptions (infra/). Kept apart from routes.ts,
 * which the functions import, so no bundle carries it: only infra/ and contract/ import this
 * module (biome.json forbids it to every file of functions/ and lib/).
 */
import { routes, type OperationName, type Route } from './routes.ts';

const summaries: Readonly<Record<OperationName, string>> = {
  listPets: 'List all animals',
  createPet: 'Add an animal',
  getPet: 'Get an animal (deprecated)',
};

export interface DocumentedRoute extends Route {
  readonly summary: string;
}

/** `routes`, in their order, each with its summary. */
export const documentedRoutes: readonly DocumentedRoute[] = routes.map((route) => ({
  ...route,
  summary: summaries[route.operation],
}));
