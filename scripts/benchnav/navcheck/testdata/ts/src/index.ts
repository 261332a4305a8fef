export { Square } from './square';
export type { Shape } from './shape';
