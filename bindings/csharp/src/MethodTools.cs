using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Reflection;
using System.Text;
using System.Threading.Tasks;

namespace Capstan
{
    /// <summary>Tools from methods marked <see cref="ToolAttribute"/>. The
    /// schema of each parameter comes from its type: <c>string</c>,
    /// <c>bool</c>, integers (<c>integer</c>), <c>float</c>/<c>double</c>/<c>decimal</c>
    /// (<c>number</c>), enums (their names), arrays and <c>List&lt;T&gt;</c>,
    /// <c>Nullable&lt;T&gt;</c>, and classes or structs by their public
    /// fields and properties (8 levels at most). A parameter with a default
    /// value, or nullable, is optional; the others are required, and no
    /// other property is accepted. A type with no JSON form (a delegate, a
    /// pointer, <c>object</c>) is refused at registration, naming the
    /// parameter. Only reflection: no code is generated at run time, so
    /// this works under IL2CPP and full AOT.</summary>
    public static class MethodTools
    {
        private const int MaxDepth = 8;

        internal sealed class Made
        {
            internal string Name, Description, Schema;
            internal ToolFlags Flags;
            internal uint TimeoutMs;
            internal Callbacks.Entry Entry;
        }

        internal static List<Made> Of(Type type, object target, IJsonAdapter json)
        {
            if (json == null) throw new ArgumentNullException("json");
            var flags = BindingFlags.Public | BindingFlags.Static | (target != null ? BindingFlags.Instance : 0);
            var made = new List<Made>();
            foreach (var m in type.GetMethods(flags))
            {
                var attr = (ToolAttribute)Attribute.GetCustomAttribute(m, typeof(ToolAttribute));
                if (attr == null) continue;
                made.Add(Make(m, m.IsStatic ? null : target, attr, json));
            }
            return made;
        }

        private static Made Make(MethodInfo m, object target, ToolAttribute attr, IJsonAdapter json)
        {
            var ps = m.GetParameters();
            var props = new StringBuilder();
            var required = new List<string>();
            foreach (var p in ps)
            {
                if (p.ParameterType == typeof(ToolCall)) continue; // given by capstan, not the model
                string where = m.DeclaringType.Name + "." + m.Name + "(" + p.Name + ")";
                var schema = SchemaOf(p.ParameterType, where, 0, json);
                var desc = (ParamAttribute)Attribute.GetCustomAttribute(p, typeof(ParamAttribute));
                if (desc != null) schema = WithKey(schema, "description", Text.JsonString(desc.Description));
                bool optional = p.IsOptional || Nullable.GetUnderlyingType(p.ParameterType) != null;
                if (p.IsOptional && p.DefaultValue != null && p.DefaultValue != DBNull.Value)
                    schema = WithKey(schema, "default", JsonValue(p.DefaultValue));
                if (!optional) required.Add(Text.JsonString(p.Name));
                if (props.Length > 0) props.Append(',');
                props.Append(Text.JsonString(p.Name)).Append(':').Append(schema);
            }
            var full = "{\"type\":\"object\",\"properties\":{" + props + "}" +
                (required.Count > 0 ? ",\"required\":[" + string.Join(",", required.ToArray()) + "]" : "") +
                ",\"additionalProperties\":false}";
            bool isTask = typeof(Task).IsAssignableFrom(m.ReturnType);
            Func<ToolCall, object> invoke = call => m.Invoke(target, Bind(ps, call, json));
            return new Made
            {
                Name = attr.Name ?? SnakeCase(m.Name),
                Description = attr.Description ?? "",
                Schema = full,
                Flags = attr.Flags,
                TimeoutMs = attr.TimeoutMs,
                Entry = isTask
                    ? new Callbacks.Entry(null, call => Awaited((Task)Unwrap(invoke, call), json))
                    : new Callbacks.Entry(call => Render(Unwrap(invoke, call), json), null),
            };
        }

        /// <summary>The method's own exception, not reflection's wrapper.</summary>
        private static object Unwrap(Func<ToolCall, object> invoke, ToolCall call)
        {
            try
            {
                return invoke(call);
            }
            catch (TargetInvocationException e)
            {
                if (e.InnerException != null)
                    System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(e.InnerException).Throw();
                throw;
            }
        }

        private static Task<Callbacks.Reply> Awaited(Task task, IJsonAdapter json)
        {
            if (task == null) return null;
            return task.ContinueWith(t =>
            {
                if (t.IsFaulted) System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(t.Exception.GetBaseException()).Throw();
                if (t.IsCanceled) throw new TaskCanceledException(t);
                var result = t.GetType().GetProperty("Result");
                return Render(result == null ? null : result.GetValue(t, null), json);
            }, TaskContinuationOptions.ExecuteSynchronously);
        }

        private static Callbacks.Reply Render(object value, IJsonAdapter json)
        {
            var output = value as ToolOutput;
            if (output != null) return output.Reply;
            var s = value as string;
            if (s != null || value == null) return new Callbacks.Reply(s ?? "", false);
            // A number or a boolean reads the same as text; as text capstan need not parse it.
            if (json == BuiltInJson.Instance && (value is bool || (value.GetType().IsPrimitive && value is IConvertible && !(value is char)) || value is decimal))
            {
                var t = BuiltInJson.Instance.ToJson(value);
                if (t != "null") return new Callbacks.Reply(t, false);
            }
            return new Callbacks.Reply(json.ToJson(value), true);
        }

        private static string WithKey(string schema, string key, string json)
        {
            return "{" + Text.JsonString(key) + ":" + json + (schema == "{}" ? "}" : "," + schema.Substring(1));
        }

        private static readonly Type[] Integers =
            { typeof(int), typeof(long), typeof(short), typeof(byte), typeof(sbyte), typeof(uint), typeof(ulong), typeof(ushort) };

        private static string SchemaOf(Type t, string where, int depth, IJsonAdapter json)
        {
            if (depth > MaxDepth) throw new ArgumentException(where + ": nested deeper than 8 levels");
            var inner = Nullable.GetUnderlyingType(t);
            if (inner != null) t = inner;
            if (t == typeof(string)) return "{\"type\":\"string\"}";
            if (t == typeof(bool)) return "{\"type\":\"boolean\"}";
            if (Array.IndexOf(Integers, t) >= 0) return "{\"type\":\"integer\"}";
            if (t == typeof(float) || t == typeof(double) || t == typeof(decimal)) return "{\"type\":\"number\"}";
            if (t.IsEnum)
            {
                var names = new List<string>();
                foreach (var n in Enum.GetNames(t)) names.Add(Text.JsonString(n));
                return "{\"type\":\"string\",\"enum\":[" + string.Join(",", names.ToArray()) + "]}";
            }
            var element = ElementOf(t);
            if (element != null) return "{\"type\":\"array\",\"items\":" + SchemaOf(element, where + "[]", depth + 1, json) + "}";
            if (t == typeof(object) || typeof(Delegate).IsAssignableFrom(t) || t.IsPointer || t == typeof(IntPtr) || t.IsInterface || t.IsAbstract)
                throw new ArgumentException(where + " is a " + t.Name + ", which has no JSON form for a model to fill: use a scalar, an enum, an array or a class of such fields");
            if (t.IsClass || (t.IsValueType && !t.IsPrimitive))
            {
                var props = new StringBuilder();
                var required = new List<string>();
                foreach (var member in Members(t))
                {
                    var key = json.NameOf(member);
                    if (key == null) continue;
                    var mt = MemberType(member);
                    var schema = SchemaOf(mt, where + "." + member.Name, depth + 1, json);
                    var desc = (ParamAttribute)Attribute.GetCustomAttribute(member, typeof(ParamAttribute));
                    if (desc != null) schema = WithKey(schema, "description", Text.JsonString(desc.Description));
                    if (Nullable.GetUnderlyingType(mt) == null && mt.IsValueType) required.Add(Text.JsonString(key));
                    if (props.Length > 0) props.Append(',');
                    props.Append(Text.JsonString(key)).Append(':').Append(schema);
                }
                return "{\"type\":\"object\",\"properties\":{" + props + "}" +
                    (required.Count > 0 ? ",\"required\":[" + string.Join(",", required.ToArray()) + "]" : "") + "}";
            }
            throw new ArgumentException(where + " is a " + t.Name + ", which has no JSON form");
        }

        private static Type ElementOf(Type t)
        {
            if (t.IsArray) return t.GetElementType();
            if (t.IsGenericType && t.GetGenericTypeDefinition() == typeof(List<>)) return t.GetGenericArguments()[0];
            return null;
        }

        private static IEnumerable<MemberInfo> Members(Type t)
        {
            foreach (var f in t.GetFields(BindingFlags.Public | BindingFlags.Instance)) yield return f;
            foreach (var p in t.GetProperties(BindingFlags.Public | BindingFlags.Instance))
                if (p.CanWrite && p.GetIndexParameters().Length == 0) yield return p;
        }

        private static Type MemberType(MemberInfo m)
        {
            var f = m as FieldInfo;
            return f != null ? f.FieldType : ((PropertyInfo)m).PropertyType;
        }

        /// <summary>The method's arguments from the call's validated JSON arguments.</summary>
        private static object[] Bind(ParameterInfo[] ps, ToolCall call, IJsonAdapter json)
        {
            var args = call.Arguments;
            var values = new object[ps.Length];
            for (int i = 0; i < ps.Length; i++)
            {
                var p = ps[i];
                if (p.ParameterType == typeof(ToolCall)) { values[i] = call; continue; }
                object v;
                if (args.TryGetValue(p.Name, out v)) values[i] = json.FromJson(v, p.ParameterType);
                else if (p.IsOptional) values[i] = p.DefaultValue == DBNull.Value ? null : p.DefaultValue;
                else values[i] = null;
            }
            return values;
        }

        /// <summary>A parsed JSON value (<see cref="Json.Parse"/>'s) as type <paramref name="t"/>,
        /// members found by <paramref name="json"/>'s names.</summary>
        internal static object Convert(object v, Type t, IJsonAdapter json)
        {
            if (v == null) return null;
            var inner = Nullable.GetUnderlyingType(t);
            if (inner != null) t = inner;
            if (t.IsEnum) return Enum.Parse(t, (string)v);
            var element = ElementOf(t);
            if (element != null)
            {
                var list = (List<object>)v;
                if (t.IsArray)
                {
                    var a = Array.CreateInstance(element, list.Count);
                    for (int i = 0; i < list.Count; i++) a.SetValue(Convert(list[i], element, json), i);
                    return a;
                }
                var l = (IList)Activator.CreateInstance(t);
                foreach (var item in list) l.Add(Convert(item, element, json));
                return l;
            }
            var obj = v as Dictionary<string, object>;
            if (obj != null)
            {
                var o = Activator.CreateInstance(t);
                foreach (var member in Members(t))
                {
                    object mv;
                    var key = json.NameOf(member);
                    if (key == null || !obj.TryGetValue(key, out mv)) continue;
                    var f = member as FieldInfo;
                    if (f != null) f.SetValue(o, Convert(mv, f.FieldType, json));
                    else ((PropertyInfo)member).SetValue(o, Convert(mv, ((PropertyInfo)member).PropertyType, json), null);
                }
                return o;
            }
            return System.Convert.ChangeType(v, t, CultureInfo.InvariantCulture);
        }

        /// <summary>A tool's return value as JSON text: scalars, strings,
        /// enums (their names), dictionaries with string keys, lists and
        /// arrays, and objects by their public fields and properties.</summary>
        public static string JsonValue(object v)
        {
            var sb = new StringBuilder();
            Write(sb, v, 0);
            return sb.ToString();
        }

        private static void Write(StringBuilder sb, object v, int depth)
        {
            if (depth > 64) throw new ArgumentException("the result nests deeper than 64 levels (a cycle?)");
            if (v == null) { sb.Append("null"); return; }
            var t = v.GetType();
            if (v is string) { sb.Append(Text.JsonString((string)v)); return; }
            if (v is bool) { sb.Append((bool)v ? "true" : "false"); return; }
            if (t.IsEnum) { sb.Append(Text.JsonString(v.ToString())); return; }
            if (Array.IndexOf(Integers, t) >= 0) { sb.Append(System.Convert.ToString(v, CultureInfo.InvariantCulture)); return; }
            if (v is double || v is float)
            {
                double d = System.Convert.ToDouble(v, CultureInfo.InvariantCulture);
                sb.Append(double.IsNaN(d) || double.IsInfinity(d) ? "null" : d.ToString("R", CultureInfo.InvariantCulture));
                return;
            }
            if (v is decimal) { sb.Append(((decimal)v).ToString(CultureInfo.InvariantCulture)); return; }
            var dict = v as IDictionary;
            if (dict != null)
            {
                sb.Append('{');
                bool first = true;
                foreach (DictionaryEntry e in dict)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    sb.Append(Text.JsonString(System.Convert.ToString(e.Key, CultureInfo.InvariantCulture))).Append(':');
                    Write(sb, e.Value, depth + 1);
                }
                sb.Append('}');
                return;
            }
            var seq = v as IEnumerable;
            if (seq != null)
            {
                sb.Append('[');
                bool first = true;
                foreach (var item in seq)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    Write(sb, item, depth + 1);
                }
                sb.Append(']');
                return;
            }
            sb.Append('{');
            bool firstMember = true;
            foreach (var f in t.GetFields(BindingFlags.Public | BindingFlags.Instance))
            {
                if (!firstMember) sb.Append(',');
                firstMember = false;
                sb.Append(Text.JsonString(f.Name)).Append(':');
                Write(sb, f.GetValue(v), depth + 1);
            }
            foreach (var p in t.GetProperties(BindingFlags.Public | BindingFlags.Instance))
            {
                if (!p.CanRead || p.GetIndexParameters().Length > 0) continue;
                if (!firstMember) sb.Append(',');
                firstMember = false;
                sb.Append(Text.JsonString(p.Name)).Append(':');
                Write(sb, p.GetValue(v, null), depth + 1);
            }
            sb.Append('}');
        }

        /// <summary><c>GetWeather</c> -> <c>get_weather</c>.</summary>
        internal static string SnakeCase(string name)
        {
            var sb = new StringBuilder();
            for (int i = 0; i < name.Length; i++)
            {
                char c = name[i];
                if (char.IsUpper(c))
                {
                    if (i > 0 && (char.IsLower(name[i - 1]) || (i + 1 < name.Length && char.IsLower(name[i + 1])))) sb.Append('_');
                    sb.Append(char.ToLowerInvariant(c));
                }
                else sb.Append(c);
            }
            return sb.ToString();
        }
    }
}
