import { Circle } from './circle';
import { Shape } from './shape';

// totalArea adds the areas of shapes.
export function totalArea(shapes: Shape[]): number {
  let sum = 0;
  for (const s of shapes) {
    sum += s.area();
  }
  return sum;
}

export function describe(s: Shape): string {
  return `${s.name()}: ${s.area().toFixed(2)}`;
}

const shapes: Shape[] = [new Circle(1), new Circle(2)];
console.log(describe(shapes[0]), totalArea(shapes));
