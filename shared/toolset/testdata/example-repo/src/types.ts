export interface RequestContext {
  userId: string;
  roles: string[];
}
