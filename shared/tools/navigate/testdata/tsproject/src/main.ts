import { Shape } from './shape';
import { Circle, Ring } from './circle';

/** The total area of shapes. */
export function totalArea(shapes: Shape[]): number {
  let sum = 0;
  for (const s of shapes) {
    sum += s.area();
  }
  return sum;
}

export function report(): string {
  const c = new Circle(1);
  return 'é' + c.area() + totalArea([c, new Ring(2)]);
}
