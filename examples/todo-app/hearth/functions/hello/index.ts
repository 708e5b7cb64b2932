// POST {"name": "Ada"} -> {"message": "Hello Ada!"}
import { corsHeaders } from '../_shared/cors.ts';
import { greeting } from './greeting.ts';

Deno.serve(async (req) => {
  if (req.method === 'OPTIONS') return new Response('ok', { headers: corsHeaders });
  const { name = 'there' } = await req.json().catch(() => ({}));
  return Response.json({ message: greeting(name) }, { headers: corsHeaders });
});
