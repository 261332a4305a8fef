import jwt from 'jsonwebtoken';
import { TokenManager } from './TokenManager';
import { UserRepository } from '../users/UserRepository';
import type { RequestContext } from '@/types';

export interface AuthContext extends RequestContext {
  token: string;
}

export class AuthService {
  private tokens = new TokenManager();
  private users = new UserRepository();

  constructor(private secret: string) {}

  // Generate JWT token
  generateToken(payload: object): string {
    const token = jwt.sign(payload, this.secret);
    return token;
  }
}

export function handleAuth(header: string | undefined, service: AuthService): AuthContext | null {
  if (!header?.startsWith('Bearer ')) {
    return null;
  }
  const token = header.slice('Bearer '.length);
  return { token, userId: '', roles: [] };
}
