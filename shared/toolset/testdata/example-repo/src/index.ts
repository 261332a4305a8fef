import { AuthService } from './server/auth/AuthService';

const auth = new AuthService(process.env.JWT_SECRET ?? 'dev-secret');
console.log(auth.generateToken({ sub: 'demo' }));
