// Shape is anything with an area.
export interface Shape {
  area(): number;
}

// totalArea adds the areas of shapes.
export function totalArea(shapes: Shape[]): number {
  return shapes.reduce((sum, s) => sum + s.area(), 0);
}
