// What an MCP mount asks its host: OAuth 2.1 (the user's authorization, the
// tokens kept between mounts, a grant without a user) and the answers to a
// mounted server's input requests. capstan runs the protocols; the host's
// delegates are reached through static [MonoPInvokeCallback] thunks and one
// GCHandle per mount and kind, which capstan's destroy releases once.
using System;
using System.Runtime.InteropServices;
using AOT;

namespace Capstan
{
    /// <summary>OAuth 2.1 for an HTTP mount whose server asks for it (the MCP
    /// authorization spec): capstan discovers the authorization server,
    /// registers a client unless <see cref="ClientId"/> is set, runs PKCE,
    /// exchanges the code, refreshes the tokens, and asks the host only for
    /// what it alone can do. Without <see cref="Authorize"/> (no user),
    /// tokens come from a grant: <see cref="ClientId"/> with
    /// <see cref="ClientSecret"/> or <see cref="ClientKey"/> (client
    /// credentials), or <see cref="Assertion"/> (the JWT-bearer grant, through
    /// <see cref="IdentityProvider"/> when set). Every delegate runs on one of
    /// capstan's MCP threads and must not dispose the mount.</summary>
    public sealed class McpOAuth
    {
        /// <summary>The user's part: show the authorization URL (open a
        /// browser), wait until the authorization server sends the user to
        /// <see cref="RedirectUri"/>, and return that whole URL (with its
        /// <c>code</c> and <c>state</c>). Null, "" or an exception refuses: the
        /// mount fails with <c>CAPSTAN_ERR_MCP_CONNECT</c> naming the
        /// exception. May block, up to the mount's connect timeout.</summary>
        public Func<string, string> Authorize { get; set; }
        /// <summary>Where the user is sent back; required with <see cref="Authorize"/>.</summary>
        public string RedirectUri { get; set; }
        /// <summary>A client registered beforehand; null: none.</summary>
        public string ClientId { get; set; }
        /// <summary><see cref="ClientId"/>'s secret (a confidential client); null: none.</summary>
        public string ClientSecret { get; set; }
        /// <summary>HTTPS URL of the host's client-id metadata document; null: none.</summary>
        public string ClientMetadataUrl { get; set; }
        /// <summary>Space-separated scopes; null: the server's choice.</summary>
        public string Scopes { get; set; }
        /// <summary>What <see cref="SaveTokens"/> kept last (null: nothing, so
        /// a new authorization). Tokens are a secret: keep them as one.</summary>
        public Func<string> LoadTokens { get; set; }
        /// <summary>Keeps the tokens (JSON text) for <see cref="LoadTokens"/>;
        /// null: forget what was kept.</summary>
        public Action<string> SaveTokens { get; set; }
        /// <summary>PEM text of <see cref="ClientId"/>'s private key (PKCS#8,
        /// EC P-256): the client authenticates with a signed assertion
        /// (private_key_jwt, ES256) instead of a secret. Text that is not such
        /// a key fails the mount with <c>CAPSTAN_ERR_INVALID_ARGUMENT</c>.</summary>
        public string ClientKey { get; set; }
        /// <summary>A JWT the host got elsewhere, for the given audience:
        /// the workload's identity token (the audience is the authorization
        /// server's issuer), or with <see cref="IdentityProvider"/> the user's
        /// ID token from it (the audience is its issuer). Null, "" or an
        /// exception refuses, failing the mount. Used without <see cref="Authorize"/>.</summary>
        public Func<string, string> Assertion { get; set; }
        /// <summary>The enterprise identity provider where <see cref="Assertion"/>'s
        /// ID token is exchanged (SEP-990); needs <see cref="Assertion"/>.</summary>
        public McpIdentityProvider IdentityProvider { get; set; }
        /// <summary>The issuer of the authorization server that
        /// <see cref="ClientSecret"/> or <see cref="ClientKey"/> belong to:
        /// they are sent there only (null: only to one of the MCP server's own
        /// origin; "*": any the server names).</summary>
        public string ClientIssuer { get; set; }
    }

    /// <summary>An enterprise identity provider (<see cref="McpOAuth.IdentityProvider"/>):
    /// all of issuer, token endpoint and client id; the secret is null for a public client.</summary>
    public sealed class McpIdentityProvider
    {
        public McpIdentityProvider(string issuer, string tokenEndpoint, string clientId, string clientSecret = null)
        {
            Issuer = issuer;
            TokenEndpoint = tokenEndpoint;
            ClientId = clientId;
            ClientSecret = clientSecret;
        }

        public string Issuer { get; private set; }
        public string TokenEndpoint { get; private set; }
        public string ClientId { get; private set; }
        public string ClientSecret { get; private set; }
    }

    /// <summary>What a mounted server may ask its client while running a
    /// tool (<c>CAPSTAN_MCP_INPUT_*</c>), declared to it as capabilities.</summary>
    [Flags]
    public enum McpInputMethods : uint
    {
        None = 0,
        /// <summary><c>elicitation/create</c>: ask the user.</summary>
        Elicitation = 1u << 0,
        /// <summary><c>sampling/createMessage</c>: ask the host's model.</summary>
        Sampling = 1u << 1,
        /// <summary><c>roots/list</c>.</summary>
        Roots = 1u << 2,
    }

    /// <summary>The host's answers to what a mounted server asks while running
    /// a tool (<see cref="McpMountOptions.Input"/>).</summary>
    public sealed class McpInput
    {
        /// <summary><paramref name="answer"/>(tool, method, paramsJson) returns
        /// the method's result as JSON text (for <c>elicitation/create</c>
        /// <c>{"action":"accept","content":{...}}</c>, <c>"decline"</c> or
        /// <c>"cancel"</c>), for a call of the mounted tool <c>tool</c> (its
        /// local name; null for an older server's request made mid-call).
        /// Null or an exception gives no answer: the call fails as a tool
        /// error saying so. It runs on one of capstan's MCP threads (several
        /// at once) and may block, as a user answering does.</summary>
        public McpInput(Func<string, string, string, string> answer, McpInputMethods methods = McpInputMethods.Elicitation)
        {
            if (answer == null) throw new ArgumentNullException("answer", "McpInput: methods need an answerer");
            if ((methods & (McpInputMethods.Elicitation | McpInputMethods.Sampling | McpInputMethods.Roots)) == 0 ||
                ((uint)methods & ~7u) != 0)
                throw new ArgumentException("McpInput: name at least one method (Elicitation, Sampling, Roots) and no other", "methods");
            Answer = answer;
            Methods = methods;
        }

        public Func<string, string, string, string> Answer { get; private set; }
        public McpInputMethods Methods { get; private set; }
    }

    /// <summary>One mount's OAuth delegates, and why they refused last (for the mount's error).</summary>
    internal sealed class OAuthHooks
    {
        internal readonly McpOAuth O;
        private string refusal;

        internal OAuthHooks(McpOAuth o)
        {
            O = o;
        }

        internal string Refusal
        {
            get { lock (this) return refusal; }
            set { lock (this) refusal = value; }
        }
    }

    [Preserve]
    internal static class McpCallbacks
    {
        /// <summary>True on a thread inside capstan_mcp_mount_new or _free (the host's).</summary>
        [ThreadStatic]
        internal static bool InMountCall;

        private static readonly Native.DestroyFn DestroyThunk = OnDestroy;
        private static readonly IntPtr DestroyPtr = Marshal.GetFunctionPointerForDelegate(DestroyThunk);

        /// <summary>A mount's oauth_destroy or input_destroy. Run elsewhere than
        /// inside the host's Connect or Dispose, it runs on one of capstan's MCP
        /// threads, which live as long as capstan's runtime: Mono, which waits
        /// at exit for every foreground thread that ran managed code, must not
        /// wait for it.</summary>
        [Preserve]
        [MonoPInvokeCallback(typeof(Native.DestroyFn))]
        private static void OnDestroy(IntPtr userData)
        {
            try
            {
                if (!InMountCall) System.Threading.Thread.CurrentThread.IsBackground = true;
                Callbacks.Release(userData);
            }
            catch (Exception)
            {
                // capstan calls destroy once; never throw into native code.
            }
        }

        private static readonly Native.AskFn AuthorizeThunk = OnAuthorize;
        private static readonly Native.AskFn AssertionThunk = OnAssertion;
        private static readonly Native.TokensLoadFn LoadThunk = OnLoad;
        private static readonly Native.TokensSaveFn SaveThunk = OnSave;
        private static readonly Native.InputFn InputThunk = OnInput;
        internal static readonly IntPtr AuthorizePtr = Marshal.GetFunctionPointerForDelegate(AuthorizeThunk);
        internal static readonly IntPtr AssertionPtr = Marshal.GetFunctionPointerForDelegate(AssertionThunk);
        internal static readonly IntPtr LoadPtr = Marshal.GetFunctionPointerForDelegate(LoadThunk);
        internal static readonly IntPtr SavePtr = Marshal.GetFunctionPointerForDelegate(SaveThunk);
        internal static readonly IntPtr InputPtr = Marshal.GetFunctionPointerForDelegate(InputThunk);

        /// <summary>Copies <paramref name="text"/> into capstan's room; 0 if it does not fit.</summary>
        private static UIntPtr Put(string text, IntPtr room, UIntPtr cap)
        {
            var b = Text.Bytes(text);
            if (b.Length == 0 || (ulong)b.Length > (ulong)cap) return UIntPtr.Zero;
            Marshal.Copy(b, 0, room, b.Length);
            return (UIntPtr)b.Length;
        }

        /// <summary>These callbacks run on capstan's MCP blocking threads, which
        /// outlive the call by seconds: Mono, which waits at exit for every
        /// foreground thread that ran managed code, must not wait for them.</summary>
        private static void Background()
        {
            var t = System.Threading.Thread.CurrentThread;
            if (!t.IsBackground) t.IsBackground = true;
        }

        private static UIntPtr Ask(IntPtr userData, IntPtr question, IntPtr answer, UIntPtr cap, bool authorize)
        {
            OAuthHooks h = null;
            string by = authorize ? "Authorize" : "Assertion";
            try
            {
                Background();
                h = (OAuthHooks)GCHandle.FromIntPtr(userData).Target;
                var f = authorize ? h.O.Authorize : h.O.Assertion;
                var text = f(Text.FromNts(question));
                if (string.IsNullOrEmpty(text))
                {
                    h.Refusal = "McpOAuth." + by + " returned nothing";
                    return UIntPtr.Zero;
                }
                var n = Put(text, answer, cap);
                h.Refusal = n == UIntPtr.Zero ? "McpOAuth." + by + "'s answer is longer than " + (ulong)cap + " bytes" : null;
                return n;
            }
            catch (Exception e)
            {
                if (h != null) h.Refusal = "McpOAuth." + by + " threw " + e.GetType().Name + ": " + e.Message;
                return UIntPtr.Zero;
            }
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.AskFn))]
        private static UIntPtr OnAuthorize(IntPtr userData, IntPtr url, IntPtr redirect, UIntPtr cap)
        {
            return Ask(userData, url, redirect, cap, true);
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.AskFn))]
        private static UIntPtr OnAssertion(IntPtr userData, IntPtr audience, IntPtr jwt, UIntPtr cap)
        {
            return Ask(userData, audience, jwt, cap, false);
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.TokensLoadFn))]
        private static UIntPtr OnLoad(IntPtr userData, IntPtr buf, UIntPtr cap)
        {
            try
            {
                Background();
                var tokens = ((OAuthHooks)GCHandle.FromIntPtr(userData).Target).O.LoadTokens();
                // Tokens that do not fit are as good as none: capstan authorizes again.
                return string.IsNullOrEmpty(tokens) ? UIntPtr.Zero : Put(tokens, buf, cap);
            }
            catch (Exception e)
            {
                Hooks.Unhandled(e);
                return UIntPtr.Zero;
            }
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.TokensSaveFn))]
        private static void OnSave(IntPtr userData, IntPtr json, UIntPtr len)
        {
            try
            {
                Background();
                var tokens = json == IntPtr.Zero || len == UIntPtr.Zero ? null : Text.FromUtf8(json, (int)(ulong)len);
                ((OAuthHooks)GCHandle.FromIntPtr(userData).Target).O.SaveTokens(tokens);
            }
            catch (Exception e)
            {
                Hooks.Unhandled(e);
            }
        }

        [Preserve]
        [MonoPInvokeCallback(typeof(Native.InputFn))]
        private static UIntPtr OnInput(IntPtr userData, IntPtr tool, IntPtr method, IntPtr parameters, UIntPtr paramsLen,
                                       IntPtr answer, UIntPtr cap)
        {
            try
            {
                Background();
                var input = (McpInput)GCHandle.FromIntPtr(userData).Target;
                var text = input.Answer(Text.FromNts(tool), Text.FromNts(method), Text.FromUtf8(parameters, (int)(ulong)paramsLen));
                // Null: no answer; capstan fails the call saying the host gave none.
                return text == null ? UIntPtr.Zero : Put(text, answer, cap);
            }
            catch (Exception e)
            {
                Hooks.Unhandled(e);
                return UIntPtr.Zero;
            }
        }

        /// <summary>Sets the OAuth fields of <paramref name="o"/>; the hooks'
        /// GCHandle (released by capstan's oauth_destroy) is made last, right
        /// before capstan_mcp_mount_new, which releases it whatever it returns.</summary>
        internal static OAuthHooks FillOAuth(ref Native.McpMountOptions o, McpOAuth oauth, Strings s)
        {
            o.OauthRedirectUri = s.Add(oauth.RedirectUri, "OAuth.RedirectUri");
            o.OauthClientId = s.Add(oauth.ClientId, "OAuth.ClientId");
            o.OauthClientSecret = s.Add(oauth.ClientSecret, "OAuth.ClientSecret");
            o.OauthClientMetadataUrl = s.Add(oauth.ClientMetadataUrl, "OAuth.ClientMetadataUrl");
            o.OauthScopes = s.Add(oauth.Scopes, "OAuth.Scopes");
            o.OauthClientKey = s.Add(oauth.ClientKey, "OAuth.ClientKey");
            o.OauthClientIssuer = s.Add(oauth.ClientIssuer, "OAuth.ClientIssuer");
            var idp = oauth.IdentityProvider;
            if (idp != null)
            {
                o.OauthIdpIssuer = s.Add(idp.Issuer, "OAuth.IdentityProvider.Issuer");
                o.OauthIdpTokenEndpoint = s.Add(idp.TokenEndpoint, "OAuth.IdentityProvider.TokenEndpoint");
                o.OauthIdpClientId = s.Add(idp.ClientId, "OAuth.IdentityProvider.ClientId");
                o.OauthIdpClientSecret = s.Add(idp.ClientSecret, "OAuth.IdentityProvider.ClientSecret");
            }
            o.OauthAuthorize = oauth.Authorize == null ? IntPtr.Zero : AuthorizePtr;
            o.OauthAssertion = oauth.Assertion == null ? IntPtr.Zero : AssertionPtr;
            o.OauthTokensLoad = oauth.LoadTokens == null ? IntPtr.Zero : LoadPtr;
            o.OauthTokensSave = oauth.SaveTokens == null ? IntPtr.Zero : SavePtr;
            var hooks = new OAuthHooks(oauth);
            o.OauthUserData = Callbacks.Hold(hooks);
            o.OauthDestroy = DestroyPtr;
            return hooks;
        }

        internal static void FillInput(ref Native.McpMountOptions o, McpInput input)
        {
            o.InputAnswer = InputPtr;
            o.InputMethods = (uint)input.Methods;
            o.InputUserData = Callbacks.Hold(input);
            o.InputDestroy = DestroyPtr;
        }
    }
}
