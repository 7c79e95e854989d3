// Capstan.Newtonsoft.dll: typed tools through Newtonsoft.Json, for projects
// that already use it (Unity's com.unity.nuget.newtonsoft-json, most .NET
// apps). A separate assembly, so Capstan.dll itself depends on nothing.
// Built and tested here against Debian's Json.NET 6.0.8; it uses only
// JsonConvert and the contract resolver, which later versions keep.
using System;
using System.Reflection;
using Newtonsoft.Json;
using Newtonsoft.Json.Serialization;

namespace Capstan.NewtonsoftJson
{
    /// <summary>Arguments read, results written and members named by
    /// Newtonsoft.Json with the given settings: <c>[JsonProperty]</c>,
    /// <c>[JsonIgnore]</c>, a naming contract resolver and converters apply
    /// to the schema capstan checks as well as to the values.
    /// <c>registry.JsonAdapter = new NewtonsoftJsonAdapter(settings)</c>
    /// before <c>AddTools</c>.</summary>
    public sealed class NewtonsoftJsonAdapter : IJsonAdapter
    {
        private readonly JsonSerializerSettings settings;
        private readonly IContractResolver resolver;

        public NewtonsoftJsonAdapter(JsonSerializerSettings settings = null)
        {
            this.settings = settings ?? new JsonSerializerSettings();
            resolver = this.settings.ContractResolver ?? new DefaultContractResolver();
        }

        public object FromJson(object parsed, Type type)
        {
            // capstan validated the arguments: the text is well-formed and bounded.
            return JsonConvert.DeserializeObject(MethodTools.JsonValue(parsed), type, settings);
        }

        public string ToJson(object value)
        {
            return JsonConvert.SerializeObject(value, settings);
        }

        public string NameOf(MemberInfo member)
        {
            var contract = resolver.ResolveContract(member.DeclaringType) as JsonObjectContract;
            if (contract == null) return member.Name;
            foreach (var p in contract.Properties)
                if (p.UnderlyingName == member.Name) return p.Ignored ? null : p.PropertyName;
            return null;
        }
    }
}
