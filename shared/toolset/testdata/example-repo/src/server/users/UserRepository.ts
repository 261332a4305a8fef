export interface User {
  id: string;
  email: string;
}

export class UserRepository {
  private users = new Map<string, User>();

  find(id: string): User | undefined {
    return this.users.get(id);
  }
}
