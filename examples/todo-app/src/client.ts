// The app's typed client. `npm run types` writes src/database.types.ts from the project:
//   hearth gen types typescript > src/database.types.ts
import { createClient } from '@supabase/supabase-js';
import type { Database, Tables, TablesInsert } from './database.types';

export type Todo = Tables<'todos'>;

export function connect(url: string, key: string) {
  return createClient<Database>(url, key);
}

export async function openTodos(supabase: ReturnType<typeof connect>, list: string): Promise<Todo[]> {
  const { data, error } = await supabase
    .from('todos')
    .select('*, lists!inner(name)')
    .eq('lists.name', list)
    .eq('done', false);
  if (error) throw error;
  return data;
}

export async function addTodo(supabase: ReturnType<typeof connect>, todo: TablesInsert<'todos'>) {
  return supabase.from('todos').insert(todo).select().single();
}

export async function summarize(supabase: ReturnType<typeof connect>): Promise<number | null> {
  const { data } = await supabase.rpc('summarize');
  return data;
}

export async function progress(supabase: ReturnType<typeof connect>) {
  const { data } = await supabase.from('open_todos').select('list, open, total');
  return data;
}
