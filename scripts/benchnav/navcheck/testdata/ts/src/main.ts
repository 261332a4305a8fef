import { Square, Shape } from './index';
import { unit as one } from './shape';
import { Circle, scaled } from './circle';

// total adds the areas of shapes.
export function total(shapes: Shape[]): number {
  let sum = 0;
  for (const s of shapes) {
    sum += s.area();
  }
  return sum;
}

// A character of two UTF-16 units before a use: columns are bytes.
const label = '😀 ' + one, sq = new Square();
console.log(label, total([sq, sq.grow(one)]), sq.name);

// A destructured variable: its name is its definition and a use of the
// property.
const { radius } = scaled(new Circle(one), 3);
console.log(radius, scaled(sq).area(), new Circle(radius).grown(2).grown().radius);
