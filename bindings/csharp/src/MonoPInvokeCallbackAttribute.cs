using System;

// Unity's and Xamarin's AOT compilers (IL2CPP, Mono full AOT) look for an
// attribute of this name on every method native code calls back into; they
// match it by name, so a host without UnityEngine gets this one.
#if !UNITY_5_3_OR_NEWER
namespace AOT
{
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class MonoPInvokeCallbackAttribute : Attribute
    {
        public MonoPInvokeCallbackAttribute(Type type) { Type = type; }
        public Type Type { get; private set; }
    }
}
#endif

namespace Capstan
{
    /// <summary>Keeps what it marks from Unity's managed code stripping:
    /// UnityLinker honours an attribute of this name in any namespace, so
    /// the binding needs no UnityEngine reference. Mark your own
    /// <see cref="ToolAttribute"/> methods, and the classes of their
    /// parameters, with it (or Unity's own): they are reached only by reflection.</summary>
    [AttributeUsage(AttributeTargets.Assembly | AttributeTargets.Class | AttributeTargets.Struct | AttributeTargets.Enum |
                    AttributeTargets.Constructor | AttributeTargets.Method | AttributeTargets.Property |
                    AttributeTargets.Field | AttributeTargets.Event | AttributeTargets.Interface | AttributeTargets.Delegate,
                    Inherited = false)]
    public sealed class PreserveAttribute : Attribute
    {
    }
}
