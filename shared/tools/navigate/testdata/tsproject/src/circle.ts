import { Shape } from './shape';

/** A circle of radius r. */
export class Circle implements Shape {
  constructor(protected r: number) {}

  area(): number {
    return 3 * this.r * this.r;
  }
}

/** A ring: a circle with a hole. */
export class Ring extends Circle {
  area(): number {
    return super.area() - 1;
  }
}
