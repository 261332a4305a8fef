// Point declares a constructor: scip-typescript names it at `new Point`.
export class Point {
  x: number;
  constructor(x: number) {
    this.x = x;
  }
}

export const origin = new Point(0);

// moved has overloads, each with its own parameters and type parameters.
export function moved<P extends Point>(p: P): P;
export function moved<P extends Point>(p: P, by: number): P;
export function moved<P extends Point>(p: P, by = 1): Point {
  return new Point(p.x + by);
}
