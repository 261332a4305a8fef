import { totalArea } from './shape';

const label = "héllo 🚀"; const total = totalArea([]);
console.log(label, total);
