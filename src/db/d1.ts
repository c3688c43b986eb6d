/** The D1 repository (see d1/index.ts), under the path its importers know. */
export {
  createD1Repository,
  type D1DatabaseLike,
  type D1PreparedStatementLike,
  type D1QueryableLike,
  type D1RepositoryOptions,
  type D1ResultLike,
} from './d1/index.js';
