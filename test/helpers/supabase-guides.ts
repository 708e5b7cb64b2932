/**
 * SQL as Supabase's guides write it, used unchanged by the tests that check
 * a Supabase project's schema works on Hearth.
 */

/** The user-management starter's trigger: a public.profiles row (id, full_name, avatar_url) per new user. */
export const HANDLE_NEW_USER = `create function public.handle_new_user()
returns trigger
set search_path = ''
as $$
begin
  insert into public.profiles (id, full_name, avatar_url)
  values (new.id, new.raw_user_meta_data->>'full_name', new.raw_user_meta_data->>'avatar_url');
  return new;
end;
$$ language plpgsql security definer;
create trigger on_auth_user_created
  after insert on auth.users
  for each row execute procedure public.handle_new_user();
`;
