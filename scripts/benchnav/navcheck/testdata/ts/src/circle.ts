import { Shape } from './shape';

// Circle is a Shape given by its radius; it declares a constructor, so
// `new Circle` is a call of it as well as a reference to the class.
export class Circle implements Shape {
  readonly name = 'circle';
  radius: number;

  constructor(radius: number) {
    this.radius = radius;
  }

  area(): number {
    return Math.PI * this.radius * this.radius;
  }

  // grown is a bigger circle: a method's overloads.
  grown(): Circle;
  grown(by: number): Circle;
  grown(by = 2): Circle {
    return new Circle(this.radius * by);
  }
}

// scaled grows a shape. Each overload declares its own parameters and
// type parameters, though the indexer names them alike.
export function scaled<S extends Circle>(shape: S, by: number): Circle;
export function scaled<S extends Shape>(shape: S): S;
export function scaled<S extends Shape>(shape: S, by = 2): Shape {
  return shape instanceof Circle ? new Circle(shape.radius * by) : shape;
}
