/** Sign-in with a platform account (the owner `hearth start` prints, or any organization member). */
import { useEffect, useState } from 'preact/hooks';
import { signIn } from '../api.ts';
import { ErrorNote, useAction } from '../ui.tsx';

export function SignInPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [run, busy, error] = useAction();
  useEffect(() => {
    document.title = 'Sign in · Hearth Studio';
  }, []);
  return (
    <main class="signin" id="main">
      <h1>Hearth Studio</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(() => signIn(email, password));
        }}
      >
        <p>
          Sign in with your Hearth account (the owner account `hearth start` printed, or one an organization added you
          as).
        </p>
        <label>
          E-mail
          <input
            type="email"
            name="email"
            autocomplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <ErrorNote error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
