export class TokenManager {
  private revoked = new Set<string>();

  revoke(token: string): void {
    this.revoked.add(token);
  }

  isRevoked(token: string): boolean {
    return this.revoked.has(token);
  }
}
