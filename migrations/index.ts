import { Foundation1796203418771 } from './1796203418771-Foundation';

/** Every migration, in order. `npm run migration:generate -- <Name>` writes a file here; add it to this list. */
export const MIGRATIONS: (new () => object)[] = [Foundation1796203418771];
